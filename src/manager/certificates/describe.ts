import { CertificateError, parserSaid } from './CertificateError.js';
import { checkKeyMatches, nodeCertificate, privateKey, splitCertificates } from './pem.js';
import type { TlsPair } from './tlsPair.js';
import { loadX509 } from './x509.js';

/**
 * What {@link describePair} read from a serving pair.
 *
 * ## Example
 * ```ts
 * import { describePair, type PairDescription } from 'rxkube/core';
 * import type { TlsPair } from 'rxkube/core';
 * declare const pair: TlsPair;
 *
 * const d: PairDescription = await describePair(pair);
 * console.log(d.dnsNames, d.notAfter);
 * ```
 */
export interface PairDescription {
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The DNS names among its subject alternative names, in order. */
  readonly dnsNames: readonly string[];
  /** The IP addresses among them, in order. */
  readonly ipAddresses: readonly string[];
  /** The certificate of the bundle's CA that signed it, PEM; undefined when none did, or when no bundle was given. */
  readonly issuerCa: string | undefined;
}

/**
 * Reads a serving pair: its validity, its names, and which CA of a bundle
 * signed it. The key must be the certificate's (checked); only the first
 * certificate of `cert` (the leaf) is described. A CA "signed it" when the
 * leaf's issuer is its subject and its key verifies the leaf's signature.
 *
 * ## Example
 * ```ts
 * import { describePair } from 'rxkube/core';
 * import type { V1Secret } from '@kubernetes/client-node';
 * declare const secret: V1Secret;
 *
 * const text = (k: string): string => Buffer.from(secret.data?.[k] ?? '', 'base64').toString();
 * const d = await describePair({ cert: text('tls.crt'), key: text('tls.key'), ca: text('ca.crt') });
 * if (d.issuerCa === undefined) console.log('tls.crt was not signed by a CA of ca.crt');
 * ```
 *
 * @param pair the certificate and key, PEM, and optionally a bundle of CA certificates that may have signed it.
 * @returns what the certificate says.
 * @throws {CertificateError} when the certificate, the key or the bundle cannot be parsed, or the key is not the certificate's.
 */
export async function describePair(pair: TlsPair & { readonly ca?: string }): Promise<PairDescription> {
  const [leafPem] = splitCertificates(pair.cert, 'the certificate');
  const leaf = nodeCertificate(leafPem ?? '', 'the certificate');
  checkKeyMatches(leaf, privateKey(pair.key, 'the key'), 'the pair');
  const cas = pair.ca === undefined ? [] : splitCertificates(pair.ca, 'the CA bundle');
  const issuerCa = cas.find((pem) => {
    const ca = nodeCertificate(pem, 'the CA bundle');
    return ca.ca && leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
  });
  const x509 = await loadX509();
  let parsed;
  try {
    parsed = new x509.X509Certificate(leafPem ?? '');
  } catch (err) {
    throw new CertificateError('malformed-certificate', `the certificate cannot be read (${parserSaid(err)}): replace it with a PEM X.509 certificate`);
  }
  const names = parsed.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  return {
    notBefore: parsed.notBefore,
    notAfter: parsed.notAfter,
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => n.value),
    issuerCa,
  };
}
