/**
 * Membership terms of a sharded replica, over HTTP against the simulator: losing membership while leaving still
 * aborts the reconciles in flight (LT-49); a new term reconciles only once the last one drained (LT-50); a term
 * that cannot go on gives its share up (LT-51); failures nobody reads are reported (LT-52).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { of, Subject } from 'rxjs';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Lease } from '../../src/leaderelection/leaseLock.js';
import { shardedController, shardLabels, type ShardEvent, type ShardedControllerOptions } from '../../src/sharding/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

const TIMING = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 } as const;
const LEASES = 'coordination.k8s.io/v1/leases';
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 1_000 });
  for (const ns of ['leavelost', 'reterm', 'wedge', 'silent', 'badsource']) {
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (let i = 0; i < 6; i++) await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns } });
  }
});

afterAll(async () => {
  await server?.close();
});

/** A reconcile as logged: its key, when it ran (in the order of everything logged), in which term, and whether its signal aborted. */
type Entry = { key: string; start: number; end?: number; aborted?: boolean; term: number };

/** One in-process replica; `hold(term)` says whether a reconcile of that term waits for `opened` (ignoring its signal unless `honourAbort`). */
function replica(identity: string, ns: string, controller: string, extra: Partial<ShardedControllerOptions<V1ConfigMap>> = {}) {
  const log: Entry[] = [];
  const events: ShardEvent<V1ConfigMap>[] = [];
  const errors: Error[] = [];
  const stop = new AbortController();
  const gate = { hold: (_term: number): boolean => false, honourAbort: true, open: (): void => undefined };
  const opened = new Promise<void>((resolve) => (gate.open = resolve));
  let completed = false;
  let failure: unknown;
  let term = 0;
  // One clock for the log and the reports: the order things happened in.
  let seq = 0;
  const errorAt: number[] = [];
  const sub = shardedController<V1ConfigMap>({
    kc: server.kubeConfig(),
    resource: 'v1/configmaps',
    namespace: ns,
    controller,
    identity,
    leaseNamespace: ns,
    ...TIMING,
    concurrency: 6,
    resyncPeriod: 200,
    reconcile: async (_cm, ctx) => {
      const e: Entry = { key: ctx.key, start: ++seq, term };
      log.push(e);
      if (gate.hold(e.term)) {
        await new Promise<void>((resolve) => {
          void opened.then(resolve);
          ctx.signal.addEventListener('abort', () => {
            e.aborted = true;
            if (gate.honourAbort) resolve();
          }, { once: true });
        });
      }
      e.end = ++seq;
    },
    signal: stop.signal,
    onError: (e) => {
      errors.push(e);
      errorAt.push(++seq);
    },
    ...extra,
  }).subscribe({
    next: (e) => {
      events.push(e);
      if (e.type === 'member' && e.member) term++;
    },
    error: (err: unknown) => (failure = err),
    complete: () => (completed = true),
  });
  return { identity, log, events, errors, errorAt, stop, sub, gate, completed: () => completed, failure: () => failure };
}

const owners = (ns: string, c: string): (string | undefined)[] => server.list<V1ConfigMap>('v1/configmaps', ns).map((cm) => cm.metadata?.labels?.[shardLabels(c).shard]);
const holder = (ns: string, name: string): string | undefined => server.get<Lease>(LEASES, ns, name)?.spec?.holderIdentity ?? undefined;

/** Hands `name`'s Lease to a holder that never renews, for a second. */
async function takeLease(ns: string, name: string): Promise<void> {
  const lease = server.get<Lease>(LEASES, ns, name)!;
  await server.update(LEASES, { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 1 } });
}

describe('shardedController signal', () => {
  // First in the file, so the leave it starts in the background ends while the server is up.
  it('SH-8: unsubscribing without the signal aborting stops listening to it', () => {
    const stop = new AbortController();
    const added = vi.spyOn(stop.signal, 'addEventListener');
    const removed = vi.spyOn(stop.signal, 'removeEventListener');
    shardedController<V1ConfigMap>({
      kc: server.kubeConfig(), resource: 'v1/configmaps', namespace: 'silent', controller: 'listener', identity: 'a', leaseNamespace: 'silent', ...TIMING,
      reconcile: () => undefined,
      signal: stop.signal,
    })
      .subscribe()
      .unsubscribe();
    const listener = added.mock.calls.find(([type]) => type === 'abort')?.[1];
    expect(listener).toBeDefined();
    expect(removed.mock.calls.some(([type, fn]) => type === 'abort' && fn === listener)).toBe(true);
  });
});

describe('shardedController terms', () => {
  it('LT-49: losing membership while leaving gracefully aborts the reconciles still in flight', async () => {
    const a = replica('a', 'leavelost', 'll');
    const b = replica('b', 'leavelost', 'll');
    try {
      await waitFor(() => {
        const o = owners('leavelost', 'll');
        return o.every((x) => x !== undefined) && o.includes('a') && o.includes('b');
      }, 'both shares', 20_000);
      a.gate.hold = () => true;
      const before = a.log.length;
      await waitFor(() => a.log.slice(before).some((e) => e.end === undefined), 'a held reconcile in flight on a', 10_000);
      // A graceful leave waits for it (shutdownTimeoutMs, 30 s); the sharder Lease goes at once.
      a.stop.abort();
      await waitFor(() => holder('leavelost', 'll.sharder') !== 'a', 'a to let the sharder go', 10_000);
      await takeLease('leavelost', 'a');
      await waitFor(() => a.log.every((e) => e.end !== undefined), "a's reconciles to end", 15_000);
      expect(a.log.slice(before).filter((e) => e.aborted).length).toBeGreaterThan(0);
      await waitFor(() => a.completed(), 'a to complete', 15_000);
      await waitFor(() => owners('leavelost', 'll').every((o) => o === 'b'), "a's share to move to b", 15_000);
      expect(a.errors).toEqual([]);
    } finally {
      a.gate.open();
      a.stop.abort();
      b.stop.abort();
      await waitFor(() => a.completed() && b.completed(), 'both to leave', 40_000);
    }
  }, 90_000);

  it('LT-50: a new term starts reconciling only once the last term drained, at most shutdownTimeoutMs after it lost', async () => {
    // Term 1's reconciles ignore their signal: only the drain's bound (reported) lets term 2 begin.
    const a = replica('a', 'reterm', 'rt', { shutdownTimeoutMs: 8_000 });
    a.gate.honourAbort = false;
    try {
      await waitFor(() => owners('reterm', 'rt').every((o) => o === 'a') && a.log.length >= 6, 'a to own and reconcile everything', 20_000);
      a.gate.hold = (term) => term === 1;
      await waitFor(() => a.log.some((e) => e.end === undefined), 'a held reconcile in flight', 10_000);
      await takeLease('reterm', 'a');
      await waitFor(() => a.events.filter((e) => e.type === 'member').length >= 3, 'a to be a member again', 20_000);
      await waitFor(() => a.log.some((e) => e.term === 2), 'term 2 to reconcile', 20_000);
      // Term 1's drain gave up on the held reconciles, and said so, before term 2's first reconcile began;
      // without the wait, term 2 starts as soon as its informer synced.
      const drainReported = a.errors.findIndex((e) => /still running/.test(e.message));
      expect(drainReported).toBeGreaterThanOrEqual(0);
      expect(a.log.find((e) => e.term === 2)!.start).toBeGreaterThan(a.errorAt[drainReported]!);
      expect(a.log.filter((e) => e.term === 1 && e.end === undefined).length).toBeGreaterThan(0);
    } finally {
      a.gate.open();
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to leave', 40_000);
    }
  }, 90_000);

  it('LT-51: a term whose controller fails for good gives its share up: the member Lease is released, the share moves, the events end with the failure', async () => {
    const broken = new Subject<never>();
    const watched = Object.assign(broken.asObservable(), { name: 'watched', store: { getByKey: () => undefined, keyOf: () => 'x' }, status$: of({ synced: true }) });
    const a = replica('a', 'wedge', 'wedge', { watches: [{ source: watched as never, map: () => undefined }] });
    const b = replica('b', 'wedge', 'wedge');
    try {
      await waitFor(() => {
        const o = owners('wedge', 'wedge');
        return o.every((x) => x !== undefined) && o.includes('a') && o.includes('b');
      }, 'both shares', 20_000);
      const failure = new Error('watched source failed for good');
      broken.error(failure);
      await waitFor(() => a.failure(), "a's events to end with the failure", 20_000);
      expect(a.failure()).toBe(failure);
      expect(holder('wedge', 'a')).not.toBe('a');
      await waitFor(() => owners('wedge', 'wedge').every((o) => o === 'b'), "a's share to move to b", 20_000);
      expect(a.completed()).toBe(false);
    } finally {
      a.stop.abort();
      b.stop.abort();
      await waitFor(() => b.completed(), 'b to leave', 40_000);
    }
  }, 90_000);

  it('LT-51: a source that throws in a later term gives the share up the same way, thrown nowhere else', async () => {
    let calls = 0;
    const thrown = new Error('no source this time');
    const a = replica('a', 'badsource', 'bs', {
      source: (labelSelector) => {
        if (++calls > 1) throw thrown;
        return informer(kubeSource(server.kubeConfig(), 'v1/configmaps', { labelSelector, namespace: 'badsource' }));
      },
    });
    try {
      await waitFor(() => owners('badsource', 'bs').every((o) => o === 'a') && a.log.length >= 6, 'a to own and reconcile everything', 20_000);
      await takeLease('badsource', 'a');
      await waitFor(() => a.failure(), "a's events to end with the source's error", 20_000);
      expect(a.failure()).toBe(thrown);
      expect(calls).toBe(2);
      expect(holder('badsource', 'a')).not.toBe('a');
    } finally {
      a.stop.abort();
    }
  }, 60_000);

  it('LT-52: reconcile failures reach onError, once a minute per key, when the subscriber reads no outcomes', async () => {
    const errors: Error[] = [];
    const stop = new AbortController();
    const calls = new Map<string, number>();
    let done = false;
    shardedController<V1ConfigMap>({
      kc: server.kubeConfig(), resource: 'v1/configmaps', namespace: 'silent', controller: 'silent', identity: 'a', leaseNamespace: 'silent', ...TIMING,
      reconcile: (_cm, ctx) => {
        calls.set(ctx.key, (calls.get(ctx.key) ?? 0) + 1);
        throw new Error('reconcile broke');
      },
      onError: (e) => errors.push(e),
      signal: stop.signal,
    }).subscribe({ complete: () => (done = true) });
    try {
      await waitFor(() => calls.size === 6 && [...calls.values()].every((n) => n >= 3), 'every key to fail three times', 20_000);
      const reported = errors.map((e) => e.message);
      expect(reported).toHaveLength(6);
      for (const key of calls.keys()) expect(reported.filter((m) => m.includes(`the reconcile of ${key} by a failed`) && m.includes('reconcile broke'))).toHaveLength(1);
    } finally {
      stop.abort();
      await waitFor(() => done, 'a to leave', 40_000);
    }
  }, 60_000);
});
