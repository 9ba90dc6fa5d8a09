import type { V1Secret } from '@kubernetes/client-node';
import { splitCertificates, nodeCertificate } from './pem.js';

/** What the pair's Secret holds, decoded (internal); a field missing or not text is undefined. */
export interface SecretMaterial {
  readonly cert: string | undefined;
  readonly key: string | undefined;
  readonly ca: string | undefined;
  /** The key of the CA that signs new serving certificates (WH-113). */
  readonly caKey: string | undefined;
}

/** What the leader writes into the Secret (internal): the pair, the bundle and the signing CA's key. */
export interface SecretContent {
  readonly cert: string;
  readonly key: string;
  readonly cas: readonly string[];
  readonly caKey: string;
}

export const CERT_FIELD = 'tls.crt';
export const KEY_FIELD = 'tls.key';
export const CA_FIELD = 'ca.crt';
export const CA_KEY_FIELD = 'ca.key';

// A field longer than this (base64) is not read: 16 certificates of 64 KiB are far more than a pair and its CAs need.
const MAX_FIELD = 1_500_000;

function field(secret: V1Secret, name: string): string | undefined {
  const v = (secret.data as Record<string, unknown> | undefined)?.[name];
  if (typeof v !== 'string' || v.length > MAX_FIELD) return undefined;
  return Buffer.from(v, 'base64').toString('utf8');
}

/** The pair and CA bundle a Secret holds (internal). */
export function materialOf(secret: V1Secret | undefined): SecretMaterial {
  if (secret === undefined) return { cert: undefined, key: undefined, ca: undefined, caKey: undefined };
  return { cert: field(secret, CERT_FIELD), key: field(secret, KEY_FIELD), ca: field(secret, CA_FIELD), caKey: field(secret, CA_KEY_FIELD) };
}

/** Text as a Secret's `data` holds it (internal). */
export const base64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** The Secret's `data` for a pair, a bundle and the CA key, beside what else it holds (internal). */
export function dataOf(existing: V1Secret | undefined, content: SecretContent): Record<string, string> {
  const text = { [CERT_FIELD]: content.cert, [KEY_FIELD]: content.key, [CA_FIELD]: content.cas.join(''), [CA_KEY_FIELD]: content.caKey };
  return { ...existing?.data, ...Object.fromEntries(Object.entries(text).map(([k, v]) => [k, base64(v)])) };
}

/** The CA certificates of a bundle that are CAs and still valid at `now`, in order; an unreadable bundle has none (internal). */
export function validCas(bundle: string | undefined, now: number, what: string): string[] {
  if (bundle === undefined || bundle === '') return [];
  let pems: string[];
  try {
    pems = splitCertificates(bundle, what);
  } catch {
    return [];
  }
  return pems.filter((pem) => {
    const c = nodeCertificate(pem, what);
    return c.ca && Date.parse(c.validTo) > now;
  });
}

/** When a certificate stops being valid, in ms since the epoch (internal). */
export function endOf(pem: string, what: string): number {
  return Date.parse(nodeCertificate(pem, what).validTo);
}
