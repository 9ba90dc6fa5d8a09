/**
 * A webhook's handler failed: it threw or rejected, overran its deadline, or
 * asked for a patch admission may not apply; or a step of rxkube's own around
 * it failed (`internal`). The request was denied (status
 * code 500) and this error went to the process's error reporter; the thrown
 * value is the `cause`.
 *
 * ## Example
 * ```ts
 * import { setErrorReporter } from 'rxkube';
 * import { AdmissionWebhookError } from 'rxkube/core';
 *
 * setErrorReporter((err) => {
 *   if (err instanceof AdmissionWebhookError) console.warn(err.webhook, err.failure, err.message);
 * });
 * ```
 */
export class AdmissionWebhookError extends Error {
  override readonly name = 'AdmissionWebhookError';
  /** The webhook's name in its configuration (`vwebsite.example.com`). */
  readonly webhook: string;
  /** What went wrong: the handler's `threw`, `timeout` or `forbiddenPatch`, or `internal` for a step of rxkube's own (copying the request, computing the patch). */
  readonly failure: 'threw' | 'timeout' | 'forbiddenPatch' | 'internal';

  constructor(webhook: string, failure: 'threw' | 'timeout' | 'forbiddenPatch' | 'internal', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.webhook = webhook;
    this.failure = failure;
  }
}
