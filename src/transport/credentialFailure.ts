/**
 * Why a credential could not be obtained, in rxkube's own words (internal).
 *
 * Its message names no token, no file contents and nothing a plugin printed,
 * so `send` may put it in the `ConnectionError` of code `CREDENTIALS` that
 * reaches `errors$`, status and logs. `code` is a system error code when one
 * explains the failure (`ENOENT`, `EACCES`).
 */
export class CredentialFailure extends Error {
  override readonly name = 'CredentialFailure';
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/** `err`'s system code as ` (ENOENT)`, or nothing: the only part of a file-system or spawn error that is kept. */
export function codeSuffix(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : '';
}

/**
 * `work`, or the reason of `signal` as soon as it aborts, whichever comes
 * first (internal). What `work` does afterwards is dropped, an error too, so
 * a provider that never settles costs a pending promise, not a waiting request.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}
