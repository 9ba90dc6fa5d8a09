import { describe, expect, it } from 'vitest';
import { describePair } from '../../../src/manager/certificates/describe.js';
import { generateCa, issueServing } from '../../../src/manager/certificates/generate.js';
import { plan, type PlanContext } from '../../../src/manager/certificates/plan.js';

const DAY = 86_400_000;
const NAMES = ['web', 'web.ops', 'web.ops.svc', 'web.ops.svc.cluster.local'];
const now = Date.parse('2031-06-01T00:00:00Z');
const opts = { name: 'web', dnsNames: NAMES, ipAddresses: [] as string[], validityMs: 365 * DAY, caValidityMs: 3650 * DAY, caSettleMs: 300_000, rotateBeforeMs: 90 * DAY };
const ctx = (extra: Partial<PlanContext> = {}, c: Partial<PlanContext['c']> = {}): PlanContext => ({ c: { ...opts, ...c }, where: 'Secret ops/x', now, bundlesTrusted: true, settleFrom: 0, ...extra });

async function pairAt(start: number, caValidityMs = 3650 * DAY, validityMs = 365 * DAY, ipAddresses: string[] = []): Promise<{ ca: string; caKey: string; cert: string; key: string; end: number; caEnd: number }> {
  const ca = await generateCa({ commonName: 'ca', validityMs: caValidityMs, now: start });
  const p = await issueServing(ca, { dnsNames: NAMES, ipAddresses, validityMs, now: start });
  return { ca: ca.cert, caKey: ca.key, cert: p.cert, key: p.key, end: p.notAfter.getTime(), caEnd: ca.notAfter.getTime() };
}

describe('plan (WH-102, WH-113…WH-115)', () => {
  it('keeps a valid pair and wakes when it is due for rotation', async () => {
    const p = await pairAt(now - 10 * DAY);
    expect(await plan({ cert: p.cert, key: p.key, ca: p.ca, caKey: p.caKey }, ctx())).toEqual({ next: undefined, reason: '', wakeAt: p.end - 90 * DAY });
  });

  it('rotates a serving certificate under the same CA: the bundle and ca.key stay as they are', async () => {
    const p = await pairAt(now - 300 * DAY);
    const out = await plan({ cert: p.cert, key: p.key, ca: p.ca, caKey: p.caKey }, ctx());
    expect(out.next?.cas).toEqual([p.ca]);
    expect(out.next?.caKey).toBe(p.caKey);
    expect(out.next?.cert).not.toBe(p.cert);
    expect((await describePair({ cert: out.next!.cert, key: out.next!.key, ca: p.ca })).issuerCa).toBe(p.ca);
    // Not while a bundle does not carry the CA yet: the served pair stays, and the leader looks again.
    expect(await plan({ cert: p.cert, key: p.key, ca: p.ca, caKey: p.caKey }, ctx({ bundlesTrusted: false }))).toMatchObject({ next: undefined, wakeAt: now + 300_000 });
  });

  it('rotates the CA in two phases: the new CA joins the bundle first, and signs a served pair only once it settled', async () => {
    const old = await pairAt(now - 300 * DAY, 365 * DAY); // a Secret without ca.key, as an earlier version wrote it
    const m = { cert: old.cert, key: old.key, ca: old.ca, caKey: undefined };
    const one = await plan(m, ctx());
    expect(one.next).toMatchObject({ cert: old.cert, key: old.key });
    const [newCa, carried] = one.next!.cas;
    expect(carried).toBe(old.ca);
    expect(newCa).not.toBe(old.ca);
    const m2 = { cert: old.cert, key: old.key, ca: one.next!.cas.join(''), caKey: one.next!.caKey };
    // The new CA was made at `now`: it settles at now + caSettleMs, later still when a bundle was written since.
    expect(await plan(m2, ctx({ now: now + 1000 }))).toEqual({ next: undefined, reason: '', wakeAt: now + 300_000 });
    expect(await plan(m2, ctx({ now: now + 400_000, settleFrom: now + 200_000 }))).toMatchObject({ next: undefined, wakeAt: now + 500_000 });
    expect(await plan(m2, ctx({ now: now + 400_000, bundlesTrusted: false }))).toMatchObject({ next: undefined });
    const two = await plan(m2, ctx({ now: now + 300_000 }));
    expect(two.next?.cas).toEqual(one.next!.cas);
    expect((await describePair({ cert: two.next!.cert, key: two.next!.key, ca: two.next!.cas.join('') })).issuerCa).toBe(newCa);
    // The old CA leaves once it ended (its serving certificates end with it).
    const m3 = { cert: two.next!.cert, key: two.next!.key, ca: two.next!.cas.join(''), caKey: one.next!.caKey };
    expect((await plan(m3, ctx({ now: now + 300_000 }))).next).toBeUndefined();
    expect((await plan(m3, ctx({ now: old.caEnd + 1 }))).next?.cas).toEqual([newCa]);
  });

  it('starts a CA rotation once less than validityMs of the CA is left', async () => {
    const ca = await generateCa({ commonName: 'ca', validityMs: 3650 * DAY, now: now - 3650 * DAY + 300 * DAY });
    const leaf = await issueServing(ca, { dnsNames: NAMES, validityMs: 365 * DAY, now: now - 10 * DAY }); // clamped to the CA's end
    const p = { ca: ca.cert, caKey: ca.key, cert: leaf.cert, key: leaf.key, caEnd: ca.notAfter.getTime() };
    const out = await plan({ cert: p.cert, key: p.key, ca: p.ca, caKey: p.caKey }, ctx());
    expect(out.next?.cas).toHaveLength(2);
    expect(out.next?.cas[1]).toBe(p.ca);
    expect(out.next?.cert).toBe(p.cert);
    expect(await plan({ cert: p.cert, key: p.key, ca: p.ca, caKey: p.caKey }, ctx({ now: now - 100 * DAY }))).toMatchObject({ next: undefined, wakeAt: p.caEnd - 365 * DAY });
  });

  it('issues at once from a new CA when nothing trusted is served, never quoting a key', async () => {
    const p = await pairAt(now - 10 * DAY);
    const stranger = await pairAt(now);
    for (const m of [
      { cert: undefined, key: undefined, ca: undefined, caKey: undefined },
      { cert: p.cert, key: stranger.key, ca: p.ca, caKey: undefined },
      { cert: p.cert, key: p.key, ca: stranger.ca, caKey: undefined },
    ]) {
      const out = await plan(m, ctx({ bundlesTrusted: false }));
      expect(out.next?.cas).toHaveLength(1);
      expect((await describePair({ cert: out.next!.cert, key: out.next!.key, ca: out.next!.cas[0]! })).issuerCa).toBe(out.next!.cas[0]);
      expect(out.reason).not.toContain(stranger.key.split('\n')[1]!.slice(0, 20));
    }
    // With a signing CA, an unreadable pair is replaced from it, the bundle unchanged.
    const out = await plan({ cert: p.cert, key: stranger.key, ca: p.ca, caKey: p.caKey }, ctx({ bundlesTrusted: false }));
    expect(out.next?.cas).toEqual([p.ca]);
  });

  it('issues anew when the IP addresses differ, comparing IPv6 in any spelling (WH-112)', async () => {
    const p = await pairAt(now, 3650 * DAY, 365 * DAY, ['127.0.0.1', '::1']);
    const m = { cert: p.cert, key: p.key, ca: p.ca, caKey: p.caKey };
    expect((await plan(m, ctx({}, { ipAddresses: ['::1', '127.0.0.1'] }))).next).toBeUndefined();
    expect((await plan(m, ctx({}, { ipAddresses: ['0:0:0:0:0:0:0:1', '127.0.0.1'] }))).next).toBeUndefined();
    expect(await plan(m, ctx({}, { ipAddresses: ['127.0.0.1'] }))).toMatchObject({ next: { cas: [p.ca] }, reason: expect.stringMatching(/other names than the Service's and hosts/) });
    expect((await plan(m, ctx())).next).toBeDefined();
  });
});
