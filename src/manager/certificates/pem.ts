import { createPrivateKey, webcrypto, X509Certificate as NodeCertificate, type KeyObject } from 'node:crypto';
import { CertificateError, parserSaid } from './CertificateError.js';

/** At most this many certificates are read from one bundle, and each PEM block at most this long: input may be hostile. */
const MAX_CERTIFICATES = 16;
const MAX_BLOCK_CHARS = 64 * 1024;
const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The certificates of a PEM bundle, in order, each as its own PEM block
 * ending in a newline (internal). Text around the blocks is ignored, as
 * OpenSSL does. Throws a `CertificateError` when there is none, when there
 * are more than 16, or when one is not a certificate.
 */
export function splitCertificates(pem: string, what: string): string[] {
  if (typeof pem !== 'string') throw new CertificateError('malformed-certificate', `${what} is not text: expected PEM certificates`);
  const blocks = pem.slice(0, MAX_CERTIFICATES * MAX_BLOCK_CHARS).match(BLOCK) ?? [];
  if (blocks.length === 0) throw new CertificateError('malformed-certificate', `${what} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  if (blocks.length > MAX_CERTIFICATES) throw new CertificateError('malformed-certificate', `${what} holds more than ${MAX_CERTIFICATES} certificates`);
  return blocks.map((b, i) => {
    if (b.length > MAX_BLOCK_CHARS) throw new CertificateError('malformed-certificate', `${what}: certificate ${i + 1} is longer than ${MAX_BLOCK_CHARS} characters`);
    nodeCertificate(b, what);
    return `${b}\n`;
  });
}

/** Node's view of one PEM certificate (internal); a parse failure is a `CertificateError`. */
export function nodeCertificate(pem: string, what: string): NodeCertificate {
  try {
    return new NodeCertificate(pem);
  } catch (err) {
    throw new CertificateError('malformed-certificate', `${what} is not a certificate that can be parsed (${parserSaid(err)}): replace it with a PEM X.509 certificate`);
  }
}

/** A PEM private key (internal); the parser's words are left out, since they may come from key bytes. */
export function privateKey(pem: string, what: string): KeyObject {
  try {
    if (typeof pem !== 'string' || pem.length > MAX_BLOCK_CHARS) throw new Error('not a bounded string');
    return createPrivateKey(pem);
  } catch {
    throw new CertificateError('malformed-key', `${what} is not a PEM private key that can be parsed: replace it with the key of the certificate beside it`);
  }
}

/** Checks that `key` is the private key of `cert` (internal). */
export function checkKeyMatches(cert: NodeCertificate, key: KeyObject, what: string): void {
  if (!cert.checkPrivateKey(key)) throw new CertificateError('key-mismatch', `${what}: the private key is not the certificate's: write them as one pair`);
}

/** A P-256 key as WebCrypto signs with it (internal); any other kind of key is `unsupported-key`. */
export async function signingKey(key: KeyObject, what: string): Promise<webcrypto.CryptoKey> {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType !== 'ec' || details?.namedCurve !== 'prime256v1') {
    throw new CertificateError('unsupported-key', `${what} is a ${key.asymmetricKeyType ?? 'non-asymmetric'} key: rxkube signs with ECDSA P-256 keys only, as generateCa makes`);
  }
  const der = key.export({ type: 'pkcs8', format: 'der' });
  return webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
}
