import { KeyObject, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { checkOptionNames, describeValue, optionNames } from '../../options/validate.js';
import { CertificateError } from './CertificateError.js';
import { checkKeyMatches, nodeCertificate, privateKey, signingKey } from './pem.js';
import type { TlsPair } from './tlsPair.js';
import { loadX509 } from './x509.js';
import type { Extension } from '@peculiar/x509';

/**
 * A PEM certificate and key as generated, with the span it is valid for.
 *
 * ## Example
 * ```ts
 * import { selfSigned, type IssuedPair } from 'rxkube/core';
 *
 * const pair: IssuedPair = await selfSigned({ dnsNames: ['localhost'], validityMs: 86_400_000 });
 * console.log(pair.notAfter.toISOString());
 * ```
 */
export interface IssuedPair extends TlsPair {
  /** The first moment the certificate is valid: an hour before it was made, for clocks that lag. */
  readonly notBefore: Date;
  /** The last moment it is valid. */
  readonly notAfter: Date;
}

/**
 * Options of {@link generateCa}.
 *
 * ## Example
 * ```ts
 * import { generateCa, type GenerateCaOptions } from 'rxkube/core';
 *
 * const opts: GenerateCaOptions = { commonName: 'web-webhook-ca', validityMs: 365 * 86_400_000 };
 * const ca = await generateCa(opts);
 * ```
 */
export interface GenerateCaOptions {
  /** The CA's subject common name (1 to 64 characters). */
  readonly commonName: string;
  /** How long the CA is valid, from `now`, in ms. */
  readonly validityMs: number;
  /** The moment validity is counted from, in ms since the epoch. @default Date.now() */
  readonly now?: number;
}

/**
 * Options of {@link issueServing} and {@link selfSigned}.
 *
 * ## Example
 * ```ts
 * import { selfSigned, type ServingOptions } from 'rxkube/core';
 *
 * const opts: ServingOptions = { dnsNames: ['web.ops.svc'], ipAddresses: ['127.0.0.1'], validityMs: 86_400_000 };
 * const pair = await selfSigned(opts);
 * ```
 */
export interface ServingOptions {
  /** The DNS names the certificate is for (subject alternative names), lower-case RFC 1123; at least one. */
  readonly dnsNames: readonly string[];
  /** IP addresses it is for too (v4 or v6). @default [] */
  readonly ipAddresses?: readonly string[];
  /** How long it is valid, from `now`, in ms; never past its CA's own end. */
  readonly validityMs: number;
  /** The moment validity is counted from, in ms since the epoch. @default Date.now() */
  readonly now?: number;
}

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** How long before it is made a certificate is valid from, for clocks that lag (internal). */
export const SKEW_MS = 60 * 60 * 1000;
/** A lower-case RFC 1123 DNS name (internal). */
export const DNS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

interface Validity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

function validity(where: string, o: Record<string, unknown>): Validity {
  const ms = o['validityMs'];
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) throw new TypeError(`${where}: option "validityMs" must be a positive finite number of milliseconds, got ${describeValue(ms)}`);
  const now = o['now'] ?? Date.now();
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new TypeError(`${where}: option "now" must be a finite number of milliseconds since the epoch, got ${describeValue(now)}`);
  // Certificates hold whole seconds: what is returned is what they say.
  const second = (t: number): Date => new Date(Math.floor(t / 1000) * 1000);
  return { notBefore: second(now - SKEW_MS), notAfter: second(now + ms) };
}

function servingOptions(where: string, opts: ServingOptions): { dnsNames: string[]; ipAddresses: string[]; validity: Validity } {
  const o = checkOptionNames(where, opts, optionNames<ServingOptions>({ dnsNames: true, ipAddresses: true, validityMs: true, now: true }));
  const dnsNames = o['dnsNames'];
  if (!Array.isArray(dnsNames) || dnsNames.length === 0) throw new TypeError(`${where}: option "dnsNames" must be a non-empty array of DNS names, got ${describeValue(dnsNames)}`);
  for (const [i, n] of (dnsNames as unknown[]).entries()) {
    if (typeof n !== 'string' || n.length > 253 || !DNS_NAME.test(n)) throw new TypeError(`${where}: option "dnsNames[${i}]" must be a lower-case RFC 1123 DNS name, got ${describeValue(n)}`);
  }
  const ips = o['ipAddresses'] ?? [];
  if (!Array.isArray(ips)) throw new TypeError(`${where}: option "ipAddresses" must be an array of IP addresses, got ${describeValue(ips)}`);
  for (const [i, ip] of (ips as unknown[]).entries()) {
    if (typeof ip !== 'string' || isIP(ip) === 0) throw new TypeError(`${where}: option "ipAddresses[${i}]" must be an IPv4 or IPv6 address, got ${describeValue(ip)}`);
  }
  return { dnsNames: dnsNames as string[], ipAddresses: ips as string[], validity: validity(where, o) };
}

function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
}

function pkcs8(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * Generates a certificate authority: a fresh ECDSA P-256 key and a
 * self-signed certificate with `basicConstraints` CA (path length 0: it
 * signs serving certificates, never other CAs) and key usage
 * `keyCertSign`, valid from an hour before `now` for `validityMs`.
 * The key is returned as PKCS#8 PEM; keep it secret.
 *
 * ## Example
 * ```ts
 * import { generateCa, issueServing } from 'rxkube/core';
 *
 * const ca = await generateCa({ commonName: 'web-webhook-ca', validityMs: 365 * 86_400_000 });
 * const serving = await issueServing(ca, { dnsNames: ['web.ops.svc'], validityMs: 90 * 86_400_000 });
 * ```
 *
 * @param opts the common name and how long it is valid.
 * @returns the CA's certificate and key, PEM, with its validity.
 * @throws {TypeError} when an option is missing or invalid.
 */
export async function generateCa(opts: GenerateCaOptions): Promise<IssuedPair> {
  const o = checkOptionNames('generateCa', opts, optionNames<GenerateCaOptions>({ commonName: true, validityMs: true, now: true }));
  const cn = o['commonName'];
  if (typeof cn !== 'string' || cn.length === 0 || cn.length > 64) throw new TypeError(`generateCa: option "commonName" must be a string of 1 to 64 characters, got ${describeValue(cn)}`);
  const span = validity('generateCa', o);
  const x509 = await loadX509();
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: [cn] }],
      keys,
      signingAlgorithm: ECDSA_P256,
      ...span,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { cert: `${cert.toString('pem')}\n`, key: pkcs8(keys.privateKey), ...span };
}

async function leaf(
  serving: ReturnType<typeof servingOptions>,
  signer: { subject: string | undefined; publicKey: webcrypto.CryptoKey | undefined; privateKey: webcrypto.CryptoKey },
  keys: webcrypto.CryptoKeyPair,
): Promise<string> {
  const x509 = await loadX509();
  const first = serving.dnsNames[0] ?? '';
  const names = [...serving.dnsNames.map((value) => ({ type: 'dns' as const, value })), ...serving.ipAddresses.map((value) => ({ type: 'ip' as const, value }))];
  const subject = [{ CN: [first.length <= 64 ? first : 'rxkube-webhook'] }];
  const extensions: Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
    new x509.SubjectAlternativeNameExtension(names, false),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
  ];
  if (signer.publicKey !== undefined) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(signer.publicKey, false, webcrypto));
  const cert = await x509.X509CertificateGenerator.create(
    {
      subject,
      issuer: signer.subject ?? subject,
      publicKey: keys.publicKey,
      signingKey: signer.privateKey,
      signingAlgorithm: ECDSA_P256,
      ...serving.validity,
      extensions,
    },
    webcrypto,
  );
  return `${cert.toString('pem')}\n`;
}

/**
 * Issues a serving certificate signed by `ca`: a fresh ECDSA P-256 key,
 * the DNS names and IP addresses as subject alternative names (what TLS
 * clients check; the common name is the first DNS name, for people),
 * extended key usage `serverAuth`, valid from an hour before `now` for
 * `validityMs` but never past the CA's own end, since a certificate is no
 * use once its issuer expired.
 *
 * ## Example
 * ```ts
 * import { generateCa, issueServing } from 'rxkube/core';
 *
 * const ca = await generateCa({ commonName: 'web-webhook-ca', validityMs: 365 * 86_400_000 });
 * const { cert, key } = await issueServing(ca, { dnsNames: ['web', 'web.ops', 'web.ops.svc'], validityMs: 365 * 86_400_000 });
 * ```
 *
 * @param ca the CA's certificate and key, PEM, as {@link generateCa} returns them (ECDSA P-256).
 * @param opts the names and how long it is valid.
 * @returns the certificate and its key, PEM, with its validity.
 * @throws {TypeError} when an option is missing or invalid.
 * @throws {CertificateError} when the CA cannot sign: not parseable, not a CA, a key that is not its own or not P-256.
 */
export async function issueServing(ca: TlsPair, opts: ServingOptions): Promise<IssuedPair> {
  const serving = servingOptions('issueServing', opts);
  if (typeof ca !== 'object' || ca === null) throw new TypeError(`issueServing: ca must be { cert, key } as generateCa returns, got ${describeValue(ca)}`);
  const caCert = nodeCertificate(ca.cert, 'the CA certificate');
  const caKey = privateKey(ca.key, 'the CA key');
  checkKeyMatches(caCert, caKey, 'the CA');
  if (!caCert.ca) throw new CertificateError('not-a-ca', 'the CA certificate is not a CA (basicConstraints CA:FALSE): pass a CA from generateCa');
  const signer = await signingKey(caKey, 'the CA key');
  const caEnd = new Date(caCert.validTo);
  const notAfter = serving.validity.notAfter > caEnd ? caEnd : serving.validity.notAfter;
  const clamped = { ...serving, validity: { notBefore: serving.validity.notBefore, notAfter } };
  const x509 = await loadX509();
  const parsed = new x509.X509Certificate(ca.cert);
  const keys = await keyPair();
  const cert = await leaf(clamped, { subject: parsed.subject, publicKey: await parsed.publicKey.export(webcrypto), privateKey: signer }, keys);
  return { cert, key: pkcs8(keys.privateKey), ...clamped.validity };
}

/**
 * Generates a self-signed serving certificate: like {@link issueServing}
 * without a CA, so a client trusts it by being given the certificate
 * itself. For tests and local runs; a cluster's webhooks want a CA they can
 * keep while serving certificates rotate.
 *
 * ## Example
 * ```ts
 * import { selfSigned } from 'rxkube/core';
 * import { createServer } from 'node:https';
 *
 * const { cert, key } = await selfSigned({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityMs: 86_400_000 });
 * createServer({ cert, key }, (_req, res) => res.end('ok')).listen(8443);
 * ```
 *
 * @param opts the names and how long it is valid.
 * @returns the certificate and its key, PEM, with its validity.
 * @throws {TypeError} when an option is missing or invalid.
 */
export async function selfSigned(opts: ServingOptions): Promise<IssuedPair> {
  const serving = servingOptions('selfSigned', opts);
  const keys = await keyPair();
  const cert = await leaf(serving, { subject: undefined, publicKey: undefined, privateKey: keys.privateKey }, keys);
  return { cert, key: pkcs8(keys.privateKey), ...serving.validity };
}
