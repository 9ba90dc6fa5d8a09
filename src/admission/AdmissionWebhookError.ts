/**
 * A webhook's handler failed: it threw or rejected, overran its deadline, or
 * asked for a patch admission may not apply. The request was denied (status
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
  /** What went wrong. */
  readonly failure: 'threw' | 'timeout' | 'forbiddenPatch';

  constructor(webhook: string, failure: 'threw' | 'timeout' | 'forbiddenPatch', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.webhook = webhook;
    this.failure = failure;
  }
}
