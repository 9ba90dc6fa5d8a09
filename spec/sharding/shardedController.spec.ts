/**
 * Replicas of a sharded controller in one process, over HTTP against the simulator: options are checked up
 * front; a replica that leaves on its signal finishes its reconciles, releases its Lease, and its share moves
 * to the others at once, without waiting out a lease; a replica whose Lease is taken from it stops: its
 * reconciles in flight see their signal abort.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/leaderelection/leaseLock.js';
import { hashRing } from '../../src/sharding/ring.js';
import { shardedController, shardLabels, type ShardEvent, type ShardedControllerOptions } from '../../src/sharding/index.js';
import { ReconcileTimeoutError } from '../../src/controller/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { Rng } from '../helpers/random.js';
import { waitFor } from '../helpers/waitFor.js';

const TIMING = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 } as const;
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 1_000 });
  await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owned' } });
  for (let i = 0; i < 30; i++) {
    const owner = await server.create<V1ConfigMap>('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `app-${i}`, namespace: 'owned' } });
    for (const part of ['tls', 'token']) {
      await server.create('v1/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: `app-${i}-${part}`,
          namespace: 'owned',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: `app-${i}`, uid: owner.metadata!.uid!, controller: true }],
        },
      });
    }
  }
  for (const ns of ['leave', 'taken']) {
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (let i = 0; i < 60; i++) await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns } });
  }
});

afterAll(async () => {
  await server?.close();
});

/** One in-process replica with its reconcile log. */
function replica(identity: string, namespace: string, controller: string, workMs = 20, extra: Partial<ShardedControllerOptions<V1ConfigMap>> = {}) {
  const log: { key: string; start: number; end?: number; aborted?: boolean }[] = [];
  const events: ShardEvent<V1ConfigMap>[] = [];
  // When each event came, on the reconcile log's clock.
  const eventAt: number[] = [];
  const errors: Error[] = [];
  const stop = new AbortController();
  let completed = false;
  // Reconciles take varied times, from a fixed seed so a failure replays the same ones.
  const durations = new Rng(1);
  const sub = shardedController<V1ConfigMap>({
    kc: server.kubeConfig(),
    resource: 'v1/configmaps',
    namespace,
    controller,
    identity,
    leaseNamespace: namespace,
    ...TIMING,
    concurrency: 2,
    resyncPeriod: 300,
    reconcile: async (_cm, ctx) => {
      const entry: { key: string; start: number; end?: number; aborted?: boolean } = { key: ctx.key, start: performance.now() };
      log.push(entry);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10 + durations.next() * workMs);
        ctx.signal.addEventListener('abort', () => {
          if (entry.end !== undefined) return;
          clearTimeout(timer);
          entry.aborted = true;
          resolve();
        }, { once: true });
      });
      entry.end = performance.now();
    },
    signal: stop.signal,
    onError: (e) => errors.push(e),
    ...extra,
  }).subscribe({
    next: (e) => {
      events.push(e);
      eventAt.push(performance.now());
    },
    complete: () => (completed = true),
  });
  return { identity, log, events, eventAt, errors, stop, sub, completed: () => completed };
}

const owners = (ns: string, controller: string): (string | undefined)[] =>
  server.list<V1ConfigMap>('v1/configmaps', ns).map((cm) => cm.metadata?.labels?.[shardLabels(controller).shard]);

/** Reconciles of one key by two replicas that overlap, described. */
function overlap(a: ReturnType<typeof replica>, b: ReturnType<typeof replica>): string | undefined {
  for (const x of a.log) {
    for (const y of b.log) {
      if (x.key !== y.key) continue;
      const xEnd = x.end ?? Infinity;
      const yEnd = y.end ?? Infinity;
      if (x.start <= yEnd && y.start <= xEnd) return `${x.key}: ${a.identity} ${x.start.toFixed(1)}..${xEnd.toFixed(1)}, ${b.identity} ${y.start.toFixed(1)}..${yEnd.toFixed(1)}`;
    }
  }
  return undefined;
}

describe('shardedController (simulator, one process)', () => {
  it('a replica that leaves on its signal releases its Lease after its last reconcile, and its share moves at once', async () => {
    const a = replica('a', 'leave', 'leaver');
    const b = replica('b', 'leave', 'leaver');
    try {
      await waitFor(() => {
        const o = owners('leave', 'leaver');
        return o.every((x) => x !== undefined) && o.includes('a') && o.includes('b');
      }, 'both shares', 20_000);
      const leftAt = performance.now();
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to complete', 10_000);
      const completedIn = performance.now() - leftAt;
      // Completed only after every one of its reconciles ended, and with its Lease released.
      expect(a.log.every((e) => e.end !== undefined && e.end <= performance.now())).toBe(true);
      expect(server.get<Lease>('coordination.k8s.io/v1/leases', 'leave', 'a')?.spec?.holderIdentity).not.toBe('a');
      // Its share moves at once: a released Lease means gone whatever its times say, so make a's look valid for an
      // hour (unless the sharder already moved the share and deleted it); a sharder that waited for an expiry would
      // still be waiting when the wait below gives up.
      if (server.get<Lease>('coordination.k8s.io/v1/leases', 'leave', 'a') !== undefined) {
        await server.patch('coordination.k8s.io/v1/leases', 'leave', 'a', { spec: { leaseDurationSeconds: 3600 } });
      }
      await waitFor(() => owners('leave', 'leaver').every((x) => x === 'b'), "a's share to move to b", 10_000);
      console.log(`graceful leave: completed in ${completedIn.toFixed(0)} ms, share moved in ${(performance.now() - leftAt).toFixed(0)} ms (lease ${TIMING.leaseDuration} ms)`);
      await waitFor(() => server.list<V1ConfigMap>('v1/configmaps', 'leave').every((cm) => b.log.some((e) => e.key === `leave/${cm.metadata!.name!}` && e.start > leftAt)), 'b to reconcile everything', 10_000);
      expect(a.log.filter((e) => e.aborted)).toEqual([]);
      expect(overlap(a, b)).toBeUndefined();
      expect([...a.errors, ...b.errors]).toEqual([]);
    } finally {
      a.stop.abort();
      b.stop.abort();
      await waitFor(() => a.completed() && b.completed(), 'both to leave', 15_000);
    }
  }, 60_000);

  it('a replica whose Lease is taken from it stops: reconciles in flight are aborted, and it takes no part until it holds it again', async () => {
    // Slow reconciles, so some are in flight when the Lease is taken.
    const a = replica('a', 'taken', 'taker', 5_000, { concurrency: 4 });
    const aborted = (): number => a.log.filter((e) => e.aborted).length;
    try {
      await waitFor(() => a.events.some((e) => e.type === 'member' && e.member) && owners('taken', 'taker').every((o) => o === 'a'), 'a to own everything', 20_000);
      await waitFor(() => a.log.length >= 4, 'reconciles in flight', 10_000);
      const lease = server.get<Lease>('coordination.k8s.io/v1/leases', 'taken', 'a')!;
      await server.update('coordination.k8s.io/v1/leases', { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 2 } });
      await waitFor(() => a.events.some((e) => e.type === 'member' && !e.member), 'a to stop being a member', 10_000);
      await waitFor(() => aborted() >= 4, 'the reconciles in flight to see their signal abort', 10_000);
      // Until it holds its Lease again (after the intruder's 2 s, or the sharder's fence), it starts nothing.
      await waitFor(() => a.events.filter((e) => e.type === 'member').length >= 3, 'a to become a member again', 30_000);
      // Timed at the events, not when a poll saw them: the new term may start reconciles before a poll sees it begin.
      const [stoppedAt, rejoinedAt] = a.events.flatMap((e, i) => (e.type === 'member' ? [a.eventAt[i]!] : [])).slice(1, 3) as [number, number];
      const during = a.log.filter((e) => e.start > stoppedAt && e.start < rejoinedAt);
      expect(during).toEqual([]);
      expect(a.errors).toEqual([]);
    } finally {
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to leave', 15_000);
    }
  }, 60_000);

  it('a replica that loses the sharder\'s Lease says so, and says so again once it holds it anew', async () => {
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'role' } });
    const a = replica('a', 'role', 'roles');
    const leading = (): boolean[] => a.events.flatMap((e) => (e.type === 'sharder' ? [e.leading] : []));
    try {
      await waitFor(() => leading().length > 0, 'a to run the sharder', 20_000);
      const lease = server.get<Lease>('coordination.k8s.io/v1/leases', 'role', 'roles.sharder')!;
      await server.update('coordination.k8s.io/v1/leases', { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 2 } });
      // The intruder never renews: after its 2 s, a takes the Lease again.
      await waitFor(() => leading().length >= 3, 'a to stop running the sharder and run it again', 30_000);
      expect(leading()).toEqual([true, false, true]);
      expect(a.errors).toEqual([]);
    } finally {
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to leave', 15_000);
    }
  }, 60_000);

  it('owned objects carry their owner\'s shard label, move with it, and a change of one reconciles its owner on the owning replica', async () => {
    const owns = [{ resource: 'v1/secrets', kind: 'ConfigMap', apiVersion: 'v1' }] as const;
    const a = replica('a', 'owned', 'owner', 20, { owns });
    const b = replica('b', 'owned', 'owner', 20, { owns });
    const shard = shardLabels('owner').shard;
    const secrets = (): V1Secret[] => server.list<V1Secret>('v1/secrets', 'owned');
    const ownerLabel = (s: V1Secret): string | undefined =>
      server.get<V1ConfigMap>('v1/configmaps', 'owned', s.metadata!.ownerReferences![0]!.name)?.metadata?.labels?.[shard];
    const together = (): boolean => secrets().every((s) => ownerLabel(s) !== undefined && s.metadata?.labels?.[shard] === ownerLabel(s));
    try {
      // Settled: every owner where the ring of both replicas puts it (not merely on both sides, which a rebalance
      // half done also shows), and every secret with its owner.
      const ring = hashRing(['a', 'b']);
      const settled = (): boolean => server.list<V1ConfigMap>('v1/configmaps', 'owned').every((cm) => cm.metadata?.labels?.[shard] === ring.ownerOf(`owned/${cm.metadata?.name ?? ''}`));
      await waitFor(() => settled() && together(), 'owners and secrets to settle over both replicas', 20_000);
      // A change of an owned object enqueues its owner, on the replica that owns both.
      const secret = secrets().find((s) => s.metadata?.labels?.[shard] === 'a')!;
      const ownerKey = `owned/${secret.metadata!.ownerReferences![0]!.name}`;
      const changedAt = performance.now();
      await server.update('v1/secrets', { ...secret, data: { v: Buffer.from('2').toString('base64') } });
      await waitFor(() => a.log.some((e) => e.key === ownerKey && e.start > changedAt), 'the owner to be reconciled on a', 10_000);
      expect(b.log.some((e) => e.key === ownerKey && e.start > changedAt)).toBe(false);
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to leave', 10_000);
      await waitFor(() => together() && owners('owned', 'owner').every((o) => o === 'b'), 'owners and secrets to move to b', 20_000);
      expect(b.events.filter((e) => e.type === 'sharding' && e.event.type === 'followed').length + a.events.filter((e) => e.type === 'sharding' && e.event.type === 'followed').length).toBeGreaterThanOrEqual(60);
      expect([...a.errors, ...b.errors]).toEqual([]);
    } finally {
      a.stop.abort();
      b.stop.abort();
      await waitFor(() => a.completed() && b.completed(), 'both to leave', 15_000);
    }
  }, 60_000);

  it('hands a drained object over in its own controller: after the reconcile in flight, as a released event, never as an outcome or through the error policy', async () => {
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'handover' } });
    for (let i = 0; i < 20; i++) await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'handover' } });
    const policyCalls: string[] = [];
    const errorPolicy = (_err: Error, _cm: V1ConfigMap, ctx: { key: string }) => {
      policyCalls.push(ctx.key);
      return 'backoff' as const;
    };
    const a = replica('a', 'handover', 'hander', 200, { errorPolicy });
    let b: ReturnType<typeof replica> | undefined;
    const drain = shardLabels('hander').drain;
    try {
      await waitFor(() => owners('handover', 'hander').every((o) => o === 'a'), 'a to own everything', 20_000);
      b = replica('b', 'handover', 'hander', 200, { errorPolicy });
      const ring = hashRing(['a', 'b']);
      const toB = server.list<V1ConfigMap>('v1/configmaps', 'handover').map((cm) => `handover/${cm.metadata!.name!}`).filter((k) => ring.ownerOf(k) === 'b');
      const released = (): string[] => a.events.flatMap((e) => (e.type === 'released' ? [e.key] : []));
      // a tells of a hand-over when its write returns, which may be after the sharder already gave the object to b.
      await waitFor(() => owners('handover', 'hander').filter((o) => o === 'b').length === toB.length && released().length >= toB.length, "b's share to reach it", 20_000);
      expect(released().sort()).toEqual([...toB].sort());
      // Each hand-over came after a's last reconcile of that key ended.
      for (const key of toB) {
        const at = a.eventAt[a.events.findIndex((e) => e.type === 'released' && e.key === key)]!;
        expect(a.log.filter((e) => e.key === key).every((e) => e.end !== undefined && e.end <= at)).toBe(true);
      }
      const outcomes = a.events.flatMap((e) => (e.type === 'outcome' && e.outcome.type !== 'gone' ? [e.outcome.obj] : []));
      expect(outcomes.filter((cm) => cm.metadata?.labels?.[drain] !== undefined)).toEqual([]);
      expect(policyCalls).toEqual([]);
      expect(overlap(a, b)).toBeUndefined();
      expect([...a.errors, ...b.errors]).toEqual([]);
    } finally {
      a.stop.abort();
      b?.stop.abort();
      await waitFor(() => a.completed() && (b?.completed() ?? true), 'both to leave', 15_000);
    }
  }, 60_000);

  it('a hand-over that meets a conflict backs off and hands the object over on the next try, reporting nothing', async () => {
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'conflict' } });
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'contested', namespace: 'conflict' } });
    const policyCalls: string[] = [];
    const a = replica('a', 'conflict', 'conflicter', 20, {
      errorPolicy: (_err, _cm, ctx) => {
        policyCalls.push(ctx.key);
        return 'backoff';
      },
    });
    const L = shardLabels('conflicter');
    try {
      await waitFor(() => owners('conflict', 'conflicter').every((o) => o === 'a') && a.log.some((e) => e.key === 'conflict/contested' && e.end !== undefined), 'a to own and reconcile it', 20_000);
      // The next write to a ConfigMap (the hand-over: a is the ring owner, so the sharder leaves a drained object alone) is refused as a conflict.
      server.faults.inject({ type: 'status', status: 409 }, { verb: 'patch', resource: 'v1/configmaps' });
      await server.patch('v1/configmaps', 'conflict', 'contested', { metadata: { labels: { [L.drain]: 'true' } } });
      await waitFor(() => a.events.some((e) => e.type === 'released' && e.key === 'conflict/contested'), 'the hand-over', 10_000);
      expect(server.faults.pending()).toBe(0);
      expect(a.events.filter((e) => e.type === 'outcome' && e.outcome.type === 'failed')).toEqual([]);
      expect(policyCalls).toEqual([]);
      expect(a.errors).toEqual([]);
    } finally {
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to leave', 15_000);
    }
  }, 60_000);

  it("passes the controller's options to the controller of its share: a reconcile longer than reconcileTimeoutMs fails and sees its signal abort", async () => {
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'timeout' } });
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slow', namespace: 'timeout' } });
    const reasons: unknown[] = [];
    const a = replica('a', 'timeout', 'timer', 20, {
      reconcileTimeoutMs: 200,
      // Never returns on its own: only the timeout ends it.
      reconcile: (_cm, ctx) =>
        new Promise<undefined>((resolve) => ctx.signal.addEventListener('abort', () => resolve(void reasons.push(ctx.signal.reason)), { once: true })),
    });
    try {
      await waitFor(() => a.events.some((e) => e.type === 'outcome' && e.outcome.type === 'failed'), 'a failed outcome', 20_000);
      const failed = a.events.flatMap((e) => (e.type === 'outcome' && e.outcome.type === 'failed' ? [e.outcome] : []));
      expect(failed[0]).toMatchObject({ key: 'timeout/slow', error: expect.any(ReconcileTimeoutError) });
      await waitFor(() => reasons.length > 0, 'the signal to abort');
      expect(reasons[0]).toBeInstanceOf(ReconcileTimeoutError);
      expect(a.errors).toEqual([]);
    } finally {
      a.stop.abort();
      await waitFor(() => a.completed(), 'a to leave', 15_000);
    }
  }, 60_000);

  it.each([
    ['owns', { owns: [{ kind: 'ConfigMap' }] }],
    ['reconcileTimeoutMs', { reconcileTimeoutMs: 0 }],
    ['rateLimiter', { rateLimiter: () => 1 }],
    ['errorPolicy', { errorPolicy: 'backoff' }],
    ['controller', { controller: 'Not_A_Dns_Label' }],
    ['identity', { identity: 'has/slash' }],
    ['leaseNamespace', { leaseNamespace: '' }],
    ['reconcile', { reconcile: 'yes' }],
    ['renewDeadline', { leaseDuration: 2_000, renewDeadline: 2_000 }],
    ['retryPeriod', { renewDeadline: 1_000, retryPeriod: 900 }],
    ['virtualNodes', { virtualNodes: 200_000 }],
    ['concurrency', { concurrency: 0 }],
    ['signal', { signal: 'stop' }],
    ['source', { source: {} }],
    ['source', { source: () => undefined }],
    ['unknown option "leases"', { leases: 'x' }],
  ])('rejects a bad %s up front with a TypeError', (name, bad) => {
    const make = (): unknown =>
      shardedController({ kc: server.kubeConfig(), resource: 'v1/configmaps', controller: 'c', identity: 'x', leaseNamespace: 'n', reconcile: () => undefined, ...bad } as never);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(name);
  });

  it('names a bad concurrency as its own option, although the term\'s controller checks it too', () => {
    const make = (): unknown =>
      shardedController({ kc: server.kubeConfig(), resource: 'v1/configmaps', controller: 'c', identity: 'x', leaseNamespace: 'n', reconcile: () => undefined, concurrency: 0 });
    expect(make).toThrow(new TypeError('shardedController: option "concurrency" must be an integer >= 1, got 0'));
  });
});
