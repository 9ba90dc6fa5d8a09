import { CertificateError } from './CertificateError.js';
import { describePair, type PairDescription } from './describe.js';
import { generateCa, issueServing, SKEW_MS } from './generate.js';
import { canonicalIp, type ResolvedWebhookCertificates } from './options.js';
import { nodeCertificate, privateKey } from './pem.js';
import { endOf, validCas, type SecretContent, type SecretMaterial } from './secretData.js';

/**
 * What the leader does with the Secret it read (internal): write `next`
 * into it (and look again at once), or, when `next` is undefined, leave it
 * and look again at `wakeAt`. `reason` says why a write is made.
 */
export interface Plan {
  readonly next: SecretContent | undefined;
  readonly reason: string;
  readonly wakeAt: number;
}

/** What the plan needs beside the Secret: the options, the time, and what the bundles and this leader know. */
export interface PlanContext {
  readonly c: Pick<ResolvedWebhookCertificates, 'name' | 'dnsNames' | 'ipAddresses' | 'validityMs' | 'caValidityMs' | 'caSettleMs' | 'rotateBeforeMs'>;
  readonly where: string;
  readonly now: number;
  /** Every existing webhook configuration and CRD already carries exactly the Secret's `ca.crt`. */
  readonly bundlesTrusted: boolean;
  /** The last moment this leader wrote a bundle, or started leading: the settle period counts from it too (WH-114). */
  readonly settleFrom: number;
}

const sameNames = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
const unique = (xs: readonly (string | undefined)[]): string[] => [...new Set(xs.filter((x): x is string => x !== undefined))];

/** The CA of the bundle whose key `ca.key` is, when it can sign (a P-256 key); undefined otherwise (WH-113). */
function signerOf(cas: readonly string[], caKey: string | undefined, where: string): string | undefined {
  if (caKey === undefined) return undefined;
  let key;
  try {
    key = privateKey(caKey, `ca.key of ${where}`);
  } catch {
    // Only a CertificateError: a key that cannot be read signs nothing.
    return undefined;
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return undefined;
  return cas.find((pem) => nodeCertificate(pem, `ca.crt of ${where}`).checkPrivateKey(key));
}

async function leafOf(m: SecretMaterial, cas: readonly string[]): Promise<PairDescription | undefined> {
  if (m.cert === undefined || m.key === undefined) return undefined;
  try {
    return await describePair({ cert: m.cert, key: m.key, ...(cas.length > 0 && { ca: cas.join('') }) });
  } catch (err) {
    if (err instanceof CertificateError) return undefined;
    throw err;
  }
}

/**
 * Decides, from the Secret's material, what the leader writes
 * (WH-102, WH-113…WH-115; WH-112 for the IP addresses): a new CA beside the
 * current one when there is no signing CA or it is near its end; a serving
 * certificate from the signing CA when the served one must go, once the
 * bundles trust that CA (and, for a CA new to the leaf, once it settled);
 * the bundle without CAs that ended.
 */
export async function plan(m: SecretMaterial, x: PlanContext): Promise<Plan> {
  const { c, where, now } = x;
  const cas = validCas(m.ca, now, `ca.crt of ${where}`);
  const leaf = await leafOf(m, cas);
  // A pair that replicas serve and the bundles (may) trust: what a rotation must keep working.
  const served = leaf !== undefined && leaf.issuerCa !== undefined && leaf.notAfter.getTime() > now && m.cert !== undefined && m.key !== undefined ? { cert: m.cert, key: m.key, issuer: leaf.issuerCa } : undefined;
  const signer = signerOf(cas, m.caKey, where);
  const leafFor = (ca: { cert: string; key: string }) => issueServing(ca, { dnsNames: c.dnsNames, ipAddresses: c.ipAddresses, validityMs: c.validityMs, now });

  if (signer === undefined || m.caKey === undefined || endOf(signer, where) - c.validityMs <= now) {
    // Phase one of a CA rotation (WH-114): the new CA joins the bundle; the served pair stays until it settled.
    const ca = await generateCa({ commonName: `${c.name}-webhook-ca`.slice(0, 64), validityMs: c.caValidityMs, now });
    const why = signer === undefined ? `${where} has no ca.key of a CA in ca.crt` : `the CA of ${where} ends within validityMs`;
    if (served === undefined) {
      const pair = await leafFor(ca);
      return { next: { cert: pair.cert, key: pair.key, cas: [ca.cert], caKey: ca.key }, reason: `${why}, and no pair it holds is trusted: a new CA and pair`, wakeAt: now };
    }
    return { next: { cert: served.cert, key: served.key, cas: [ca.cert, ...unique([served.issuer, signer])], caKey: ca.key }, reason: `${why}: a new CA joins the bundle`, wakeAt: now };
  }

  const signerEnd = endOf(signer, where);
  const others = cas.filter((ca) => ca !== signer);
  const bundle = [signer, ...others];
  const pruned = bundle.join('') !== m.ca;
  const wakes = [signerEnd - c.validityMs, ...others.map((ca) => endOf(ca, where))];
  let why: string | undefined;
  if (leaf === undefined) why = `${where} holds no serving pair that can be read`;
  else if (leaf.issuerCa === undefined) why = `tls.crt of ${where} is not signed by a CA of ca.crt`;
  else if (!sameNames(leaf.dnsNames, c.dnsNames) || !sameNames(leaf.ipAddresses.map(canonicalIp), c.ipAddresses.map(canonicalIp))) why = `tls.crt of ${where} is for other names than the Service's and hosts`;
  else if (leaf.notAfter.getTime() - c.rotateBeforeMs <= now) why = `tls.crt of ${where} ends at ${leaf.notAfter.toISOString()}, within rotateBeforeMs`;
  else if (leaf.issuerCa !== signer) why = `tls.crt of ${where} is signed by the previous CA`;
  else wakes.push(leaf.notAfter.getTime() - c.rotateBeforeMs);

  if (why !== undefined && served !== undefined) {
    // A served pair is replaced only by one the API servers already trust (WH-114, WH-115).
    const settled = Math.max(nodeCertificateMade(signer, where), x.settleFrom) + c.caSettleMs;
    const waitFor = !x.bundlesTrusted ? now + c.caSettleMs : served.issuer !== signer && settled > now ? settled : undefined;
    if (waitFor !== undefined) {
      wakes.push(waitFor);
      why = undefined;
    }
  }
  if (why !== undefined) {
    const pair = await leafFor({ cert: signer, key: m.caKey });
    return { next: { cert: pair.cert, key: pair.key, cas: bundle, caKey: m.caKey }, reason: why, wakeAt: now };
  }
  if (pruned && m.cert !== undefined && m.key !== undefined) {
    return { next: { cert: m.cert, key: m.key, cas: bundle, caKey: m.caKey }, reason: `ca.crt of ${where} holds a CA that ended`, wakeAt: now };
  }
  return { next: undefined, reason: '', wakeAt: Math.min(...wakes) };
}

/** When a CA rxkube made was made: SKEW_MS after its notBefore. */
function nodeCertificateMade(pem: string, where: string): number {
  return Date.parse(nodeCertificate(pem, `ca.crt of ${where}`).validFrom) + SKEW_MS;
}
