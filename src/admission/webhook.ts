/**
 * What a webhook server sends back for one request: an HTTP status and a JSON body.
 *
 * ## Example
 * ```ts
 * import type { WebhookAnswer } from 'rxkube/core';
 *
 * const badRequest: WebhookAnswer = { status: 400, body: { message: 'not an AdmissionReview' } };
 * ```
 */
export interface WebhookAnswer {
  /** The HTTP status: 200 for any review, even one that denies; 400 for a body that is no review. */
  readonly status: number;
  /** A JSON value (an AdmissionReview or ConversionReview, or an error object). */
  readonly body: unknown;
  /**
   * Set when the handler failed (threw, rejected, overran its deadline): a
   * short word such as `'threw'` or `'timeout'`, counted by the server in
   * `rxkube_webhook_failures_total{webhook,failure}`. @default undefined
   */
  readonly failure?: string;
}

/**
 * A webhook as the runner serves it: its kind, the path it answers on, and
 * how it answers one request. `admission.validating`, `admission.mutating`
 * and `admission.conversion` make them; the manager's webhook server routes
 * POSTs on `path` to `review`.
 *
 * ## Example
 * ```ts
 * import type { Webhook } from 'rxkube/core';
 *
 * const echo: Webhook = {
 *   type: 'validating',
 *   path: '/validate-echo',
 *   review: async (body) => ({ status: 200, body }),
 * };
 * ```
 */
export interface Webhook {
  readonly type: 'validating' | 'mutating' | 'conversion';
  /** The path it is served on, such as `/validate-example-com-v1-website`; conversion: `/convert`. */
  readonly path: string;
  /**
   * Answers one request body already read and JSON-parsed by the server
   * (`undefined` when it was not JSON). Never throws or rejects: a body that
   * is not a review is `{ status: 400 }`; a handler that fails gives a 200
   * review whose response denies, and is reported and counted.
   *
   * @param body the parsed request body.
   * @param signal aborts when the client leaves.
   * @returns the status and JSON body to send.
   */
  review(body: unknown, signal: AbortSignal): Promise<WebhookAnswer>;
}
