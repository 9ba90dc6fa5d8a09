/**
 * A serving certificate and its private key, both PEM: what a TLS server
 * presents. The certificate text may hold the chain after the leaf.
 *
 * ## Example
 * ```ts
 * import type { TlsPair } from 'rxkube/core';
 * import { readFileSync } from 'node:fs';
 *
 * const pair: TlsPair = { cert: readFileSync('tls.crt', 'utf8'), key: readFileSync('tls.key', 'utf8') };
 * ```
 */
export interface TlsPair {
  /** The certificate (chain), PEM. */
  readonly cert: string;
  /** Its private key, PEM. */
  readonly key: string;
}
