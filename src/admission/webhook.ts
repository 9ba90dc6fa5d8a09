// The server-facing shape every webhook (validating, mutating, conversion) has: what the runner serves.

/**
 * A webhook the runner serves: its kind, its path, and how it answers one
 * request body.
 */
export interface Webhook {
  readonly type: 'validating' | 'mutating' | 'conversion';
  /** `/validate-example-com-v1-website`; a conversion webhook's is `/convert`. */
  readonly path: string;
  /**
   * Answers one request body already read and JSON-parsed by the server (or `undefined` when it was not JSON).
   * Never throws or rejects: a body that is not an AdmissionReview (ConversionReview) is { status: 400 };
   * a handler that throws/rejects/overruns its deadline gives a 200 review whose response denies
   * (allowed:false, status.code 500, message naming it) and is reported (reportError) and counted.
   */
  review(body: unknown, signal: AbortSignal): Promise<WebhookAnswer>;
}

/** What a webhook answers: the HTTP status and the JSON body. */
export interface WebhookAnswer {
  readonly status: number;
  /** A JSON value. */
  readonly body: unknown;
}
