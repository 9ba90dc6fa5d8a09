/** A mistake in the command line or its kubeconfig, reported as one `error: …` line with exit code 1 before anything starts. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
