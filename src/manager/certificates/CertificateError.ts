import { printable } from '../../errors/printable.js';

/**
 * A certificate or key rxkube cannot use, with a code saying why. Its
 * message names the field (`tls.crt of Secret ops/web-webhook-tls`) and
 * what to do, and never quotes a key: a private key is a credential, so
 * nothing read from it reaches a message, and what a certificate parser
 * says is bounded and escaped.
 *
 * ## Example
 * ```ts
 * import { describePair, CertificateError } from 'rxkube/core';
 *
 * try {
 *   await describePair({ cert: 'not a certificate', key: '' });
 * } catch (err) {
 *   if (err instanceof CertificateError) console.log(err.code); // 'malformed-certificate'
 * }
 * ```
 */
export class CertificateError extends Error {
  override readonly name = 'CertificateError';
  /**
   * Why the certificate or key cannot be used:
   * - `malformed-certificate`: not a PEM X.509 certificate it can parse;
   * - `malformed-key`: not a PEM private key it can parse;
   * - `key-mismatch`: the key is not the certificate's;
   * - `not-a-ca`: a certificate asked to sign is no CA (basicConstraints);
   * - `unsupported-key`: a CA key other than ECDSA P-256, the only kind rxkube signs with.
   */
  readonly code: 'malformed-certificate' | 'malformed-key' | 'key-mismatch' | 'not-a-ca' | 'unsupported-key';

  /**
   * @param code why.
   * @param message what was read and what to do, without key material.
   */
  constructor(code: CertificateError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** A parser's own words, bounded and escaped, never for key material (internal). */
export function parserSaid(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return printable(text.slice(0, 200));
}
