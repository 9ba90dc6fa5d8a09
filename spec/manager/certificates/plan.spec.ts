import { describe, expect, it } from 'vitest';
import { generateCa, issueServing } from '../../../src/manager/certificates/generate.js';
import { plan } from '../../../src/manager/certificates/plan.js';

const DAY = 86_400_000;
const NAMES = ['web', 'web.ops', 'web.ops.svc', 'web.ops.svc.cluster.local'];
const now = Date.parse('2031-06-01T00:00:00Z');

async function pairAt(start: number, validityMs: number): Promise<{ ca: string; cert: string; key: string; end: number }> {
  const ca = await generateCa({ commonName: 'ca', validityMs, now: start });
  const p = await issueServing(ca, { dnsNames: NAMES, validityMs, now: start });
  return { ca: ca.cert, cert: p.cert, key: p.key, end: p.notAfter.getTime() };
}

describe('plan (WH-102, WH-104)', () => {
  it('keeps a valid pair and wakes when it is due for rotation', async () => {
    const p = await pairAt(now - 10 * DAY, 365 * DAY);
    expect(await plan({ cert: p.cert, key: p.key, ca: p.ca }, 'Secret ops/x', NAMES, now, 90 * DAY)).toEqual({ action: 'keep', cas: [p.ca], pruned: false, wakeAt: p.end - 90 * DAY });
  });

  it('keeps the previous CA until its certificate ends, waking then, and prunes it after', async () => {
    const old = await pairAt(now - 300 * DAY, 365 * DAY);
    const cur = await pairAt(now - DAY, 365 * DAY);
    const m = { cert: cur.cert, key: cur.key, ca: cur.ca + old.ca };
    expect(await plan(m, 'Secret ops/x', NAMES, now, 90 * DAY)).toEqual({ action: 'keep', cas: [cur.ca, old.ca], pruned: false, wakeAt: old.end });
    expect(await plan(m, 'Secret ops/x', NAMES, old.end + 1, 90 * DAY)).toEqual({ action: 'keep', cas: [cur.ca], pruned: true, wakeAt: cur.end - 90 * DAY });
  });

  it('issues, carrying the CA of a certificate that may still be served, or none when nothing served can be trusted', async () => {
    const p = await pairAt(now - 300 * DAY, 365 * DAY);
    const near = await plan({ cert: p.cert, key: p.key, ca: p.ca }, 'Secret ops/x', NAMES, now, 90 * DAY);
    expect(near).toMatchObject({ action: 'issue', carry: [p.ca] });
    expect(await plan({ cert: p.cert, key: p.key, ca: p.ca }, 'Secret ops/x', ['other'], now - 299 * DAY, 90 * DAY)).toMatchObject({ action: 'issue', carry: [p.ca] });
    expect(await plan({ cert: p.cert, key: p.key, ca: p.ca }, 'Secret ops/x', NAMES, p.end + 1, 90 * DAY)).toMatchObject({ action: 'issue', carry: [] });
    const stranger = await pairAt(now, DAY);
    expect(await plan({ cert: p.cert, key: p.key, ca: stranger.ca }, 'Secret ops/x', NAMES, now - 299 * DAY, 90 * DAY)).toMatchObject({ action: 'issue', carry: [], reason: expect.stringMatching(/not signed by a CA of ca.crt/) });
    expect(await plan({ cert: p.cert, key: undefined, ca: p.ca }, 'Secret ops/x', NAMES, now, 90 * DAY)).toMatchObject({ action: 'issue', carry: [], reason: 'Secret ops/x has no tls.key' });
    const garbled = await plan({ cert: p.cert, key: stranger.key, ca: p.ca }, 'Secret ops/x', NAMES, now, 90 * DAY);
    expect(garbled).toMatchObject({ action: 'issue', carry: [] });
    expect(garbled.action === 'issue' && garbled.reason).not.toContain(stranger.key.split('\n')[1]!.slice(0, 20));
  });

  it('issues anew when the IP addresses differ, comparing IPv6 in any spelling (WH-112)', async () => {
    const ca = await generateCa({ commonName: 'ca', validityMs: 365 * DAY, now });
    const p = await issueServing(ca, { dnsNames: NAMES, ipAddresses: ['127.0.0.1', '::1'], validityMs: 365 * DAY, now });
    const m = { cert: p.cert, key: p.key, ca: ca.cert };
    expect(await plan(m, 'Secret ops/x', NAMES, now, 90 * DAY, ['::1', '127.0.0.1'])).toMatchObject({ action: 'keep' });
    expect(await plan(m, 'Secret ops/x', NAMES, now, 90 * DAY, ['0:0:0:0:0:0:0:1', '127.0.0.1'])).toMatchObject({ action: 'keep' });
    expect(await plan(m, 'Secret ops/x', NAMES, now, 90 * DAY, ['127.0.0.1'])).toMatchObject({ action: 'issue', carry: [ca.cert], reason: expect.stringMatching(/other names than the Service's and hosts/) });
    expect(await plan(m, 'Secret ops/x', NAMES, now, 90 * DAY)).toMatchObject({ action: 'issue' });
  });
});
