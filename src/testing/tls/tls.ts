import { KeyObject, webcrypto } from 'node:crypto';

type X509Module = typeof import('@peculiar/x509');

/**
 * A CA and the serving certificate it signed for 127.0.0.1 and localhost,
 * PEM-encoded.
 */
export interface ServingCertificate {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

const ECDSA_P256: webcrypto.EcKeyGenParams & webcrypto.EcdsaParams = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const HOUR_MS = 60 * 60 * 1000;
const YEAR_MS = 365 * 24 * HOUR_MS;

// The library is loaded on the first TLS start only, so a plain-HTTP simulator never pays for it.
let x509Module: Promise<X509Module> | undefined;

/**
 * Loads @peculiar/x509. Its dependency injection container (tsyringe) refuses
 * to load unless `Reflect.getMetadata` exists, and only reads parameter
 * metadata while the library's own classes are defined (none of them takes
 * constructor parameters). So when no reflect-metadata polyfill is present,
 * two readers that find no metadata stand in for the length of the import
 * and are removed afterwards: nothing global is left behind for another
 * polyfill to trip over.
 */
function loadX509(): Promise<X509Module> {
  x509Module ??= (async () => {
    const reflect = Reflect as unknown as Record<string, unknown>;
    const stand = typeof reflect['getMetadata'] !== 'function';
    if (stand) {
      for (const key of ['getMetadata', 'getOwnMetadata']) {
        Object.defineProperty(reflect, key, { value: () => undefined, configurable: true, writable: true, enumerable: false });
      }
    }
    try {
      return await import('@peculiar/x509');
    } catch (err) {
      // A failed load is not remembered: the next TLS start tries again.
      x509Module = undefined;
      throw err;
    } finally {
      if (stand) {
        delete reflect['getMetadata'];
        delete reflect['getOwnMetadata'];
      }
    }
  })();
  return x509Module;
}

function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
}

/**
 * Generates a fresh P-256 CA and a serving certificate for `127.0.0.1` and
 * `localhost` signed by it, valid from an hour ago for a year. The
 * certificates are encoded by @peculiar/x509 over Node's WebCrypto, so every
 * field (serial numbers included) is minimal DER that OpenSSL accepts.
 *
 * @returns the CA certificate, the serving certificate and its PKCS#8 key, as PEM.
 */
export async function generateServingCertificate(): Promise<ServingCertificate> {
  const x509 = await loadX509();
  const crypto = webcrypto;
  const [caKeys, leafKeys] = await Promise.all([keyPair(), keyPair()]);
  const now = Date.now();
  const validity = { notBefore: new Date(now - HOUR_MS), notAfter: new Date(now + YEAR_MS) };
  const caName = 'CN=rxkube-simulator-ca';
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: caName,
      keys: caKeys,
      signingAlgorithm: ECDSA_P256,
      ...validity,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const leaf = await x509.X509CertificateGenerator.create(
    {
      subject: 'CN=rxkube-simulator',
      issuer: ca.subject,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ECDSA_P256,
      ...validity,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension(
          [
            { type: 'dns', value: 'localhost' },
            { type: 'ip', value: '127.0.0.1' },
          ],
          false,
        ),
        await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const keyPem = KeyObject.from(leafKeys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString();
  return { caPem: `${ca.toString('pem')}\n`, certPem: `${leaf.toString('pem')}\n`, keyPem };
}
