/**
 * A serving certificate and its private key, both PEM-encoded: what an HTTPS
 * server is given, and what the webhook server swaps in when it changes.
 * `cert` may be a chain (the leaf first). The key is a credential: it never
 * appears in an error or a log line.
 *
 * ## Example
 * ```ts
 * import type { TlsPair } from 'rxkube/core';
 * import { createServer } from 'node:https';
 * declare const pair: TlsPair;
 *
 * createServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end('ok'));
 * ```
 */
export interface TlsPair {
  /** The certificate (or chain, leaf first), PEM. */
  readonly cert: string;
  /** Its private key, PEM (PKCS#8). */
  readonly key: string;
}
