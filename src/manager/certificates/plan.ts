import { CertificateError } from './CertificateError.js';
import { describePair } from './describe.js';
import { endOf, validCas, type SecretMaterial } from './secretData.js';

/**
 * What the leader does with the Secret it read (internal):
 * - `issue`: generate a new CA and serving pair; `carry` are the CAs kept
 *   in the bundle beside the new one, because the serving certificate they
 *   signed may still be served while replicas switch (WH-104);
 * - `keep`: the pair stays; `cas` is the bundle as it should be (expired
 *   CAs left out, which `pruned` says), and `wakeAt` when to look again.
 */
export type Plan =
  | { readonly action: 'issue'; readonly reason: string; readonly carry: readonly string[] }
  | { readonly action: 'keep'; readonly cas: readonly string[]; readonly pruned: boolean; readonly wakeAt: number };

const sameNames = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
/** An IP address as Node prints it (IPv6 shortest, lower case), so a certificate's form and an option's compare equal. */
const canonicalIp = (ip: string): string => (ip.includes(':') ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip);

/**
 * Decides, from the Secret's material, the names the certificate must have,
 * the time now and how long before its end it is rotated (WH-102, WH-103,
 * WH-112 for the IP addresses).
 */
export async function plan(m: SecretMaterial, where: string, dnsNames: readonly string[], now: number, rotateBeforeMs: number, ipAddresses: readonly string[] = []): Promise<Plan> {
  if (m.cert === undefined || m.key === undefined || m.ca === undefined) {
    const missing = [m.cert === undefined && 'tls.crt', m.key === undefined && 'tls.key', m.ca === undefined && 'ca.crt'].filter(Boolean).join(', ');
    return { action: 'issue', reason: `${where} has no ${missing}`, carry: [] };
  }
  let d;
  try {
    d = await describePair({ cert: m.cert, key: m.key, ca: m.ca });
  } catch (err) {
    if (err instanceof CertificateError) return { action: 'issue', reason: `${where}: ${err.message}`, carry: [] };
    throw err;
  }
  const end = d.notAfter.getTime();
  // The CA of a serving certificate that may still be served stays in the bundle until that certificate ends.
  const carry = d.issuerCa !== undefined && end > now ? [d.issuerCa] : [];
  if (d.issuerCa === undefined) return { action: 'issue', reason: `${where}: tls.crt is not signed by a CA of ca.crt`, carry: [] };
  if (!sameNames(d.dnsNames, dnsNames) || !sameNames(d.ipAddresses.map(canonicalIp), ipAddresses.map(canonicalIp))) {
    return { action: 'issue', reason: `${where}: tls.crt is for other names than the Service's and hosts`, carry };
  }
  if (end - rotateBeforeMs <= now) return { action: 'issue', reason: `${where}: tls.crt ends at ${d.notAfter.toISOString()}, within rotateBeforeMs`, carry };
  const all = validCas(m.ca, Number.NEGATIVE_INFINITY, `ca.crt of ${where}`);
  const others = validCas(m.ca, now, `ca.crt of ${where}`).filter((ca) => ca !== d.issuerCa);
  const cas = [d.issuerCa, ...others];
  const wakeAt = Math.min(end - rotateBeforeMs, ...others.map((ca) => endOf(ca, `ca.crt of ${where}`)));
  return { action: 'keep', cas, pruned: all.length !== cas.length || all[0] !== d.issuerCa, wakeAt };
}
