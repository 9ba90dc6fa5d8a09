/**
 * The sharder over HTTP, against the simulator: it labels every object with its ring owner among the live
 * member Leases, drains (never relabels) an object whose live owner is no longer its ring owner, gives a
 * released object to its new owner, and moves the objects of a member whose Lease expired directly — but
 * only after taking that Lease over.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asyncScheduler, Subscription, type SchedulerLike } from 'rxjs';
import type { Lease } from '../../src/leaderelection/leaseLock.js';
import { hashRing } from '../../src/sharding/ring.js';
import { shardLabels, sharder, type ShardingEvent } from '../../src/sharding/index.js';
import { informer } from '../../src/informer/index.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

const CONTROLLER = 'checker';
const L = shardLabels(CONTROLLER);
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 1_000 });
  await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shards' } });
  for (let i = 0; i < 300; i++) {
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' }, data: { i: String(i) } });
  }
});

afterAll(async () => {
  await server?.close();
});

const now = (): string => new Date().toISOString().replace('Z', '000Z');

/** Runs what is due now; a delayed action (a requeueAfter, a backoff) never runs, so nothing can be polled for. */
const held: SchedulerLike = { now: () => Date.now(), schedule: (work, delay = 0, state) => (delay > 0 ? new Subscription() : asyncScheduler.schedule(work as never, 0, state)) };

/** The member Lease `name` of `controller`'s shards, renewed now for `seconds`, held by `holder` ('' once released). */
async function member(name: string, seconds: number, { namespace = 'shards', controller = CONTROLLER, holder = name } = {}): Promise<void> {
  await server.create<Lease>('coordination.k8s.io/v1/leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, labels: { [shardLabels(controller).lease]: controller } },
    spec: { holderIdentity: holder, leaseDurationSeconds: seconds, acquireTime: now(), renewTime: now(), leaseTransitions: 0 },
  });
}

const configMaps = (): V1ConfigMap[] => server.list<V1ConfigMap>('v1/configmaps', 'default');
const ownerOf = (cm: V1ConfigMap): string | undefined => cm.metadata?.labels?.[L.shard];
const drained = (cm: V1ConfigMap): boolean => cm.metadata?.labels?.[L.drain] !== undefined;

describe('sharder (simulator)', () => {
  let sub: Subscription | undefined;
  const events: ShardingEvent[] = [];
  const errors: Error[] = [];

  afterAll(() => sub?.unsubscribe());

  it('assigns every object to its ring owner among the live members, evenly', async () => {
    await member('a', 3_600);
    await member('b', 3_600);
    await member('c', 3_600);
    const started = performance.now();
    sub = sharder({
      kc: server.kubeConfig(),
      resource: 'v1/configmaps',
      namespace: 'default',
      controller: CONTROLLER,
      leaseNamespace: 'shards',
      identity: 'sharder-1',
      leaseDuration: 2_000,
      renewDeadline: 1_500,
      onError: (e) => errors.push(e),
    }).subscribe((e) => events.push(e));
    const ring = hashRing(['a', 'b', 'c']);
    await waitFor(() => configMaps().every((cm) => ownerOf(cm) !== undefined), 'every object to be labelled', 20_000);
    console.log(`sharder labelled 300 objects in ${(performance.now() - started).toFixed(0)} ms`);
    for (const cm of configMaps()) expect(ownerOf(cm)).toBe(ring.ownerOf(`default/${cm.metadata!.name!}`));
    const counts = ['a', 'b', 'c'].map((m) => configMaps().filter((cm) => ownerOf(cm) === m).length);
    expect(Math.min(...counts)).toBeGreaterThan(60);
    // The server may hold the last labels a moment before the sharder has read their answers.
    await waitFor(() => events.filter((e) => e.type === 'assigned' && e.from === undefined).length >= 300, 'an event per assignment');
    expect(events.filter((e) => e.type === 'assigned' && e.from === undefined)).toHaveLength(300);
    expect(events[0]).toEqual({ type: 'ring', members: ['a', 'b', 'c'] });
  }, 30_000);

  it('moves the objects of a member whose Lease expired directly, after taking its Lease over', async () => {
    // c's last renewal says 1 s; it is never renewed again, so once it stood still for 1 s on the sharder's clock, c is gone.
    const c = server.get<Lease>('coordination.k8s.io/v1/leases', 'shards', 'c')!;
    await server.update('coordination.k8s.io/v1/leases', { ...c, spec: { ...c.spec, leaseDurationSeconds: 1, renewTime: now() } });
    const ofC = configMaps().filter((cm) => ownerOf(cm) === 'c').map((cm) => cm.metadata!.name!);
    expect(ofC.length).toBeGreaterThan(0);
    // Every version of c's Lease, as a watch sees them.
    const versions: Lease[] = [];
    const watch = informer(kubeSource(server.kubeConfig(), 'coordination.k8s.io/v1/leases', { namespace: 'shards', fieldSelector: 'metadata.name=c' })).subscribe((e) => {
      if (e.type !== 'delete') versions.push(e.obj as Lease);
    });
    try {
      await waitFor(() => configMaps().every((cm) => ownerOf(cm) !== 'c'), "c's objects to move", 20_000);
      // Then, with nothing left labelled c, its Lease goes.
      await waitFor(() => server.get<Lease>('coordination.k8s.io/v1/leases', 'shards', 'c') === undefined, "c's Lease to be deleted", 10_000);
    } finally {
      watch.unsubscribe();
    }
    const fenced = versions.find((l) => l.spec?.holderIdentity !== 'c');
    expect(fenced?.spec?.holderIdentity).toBe('sharder-1/sharder');
    expect(fenced?.spec?.leaseTransitions).toBe(1);
    const lastMove = events.findLastIndex((e) => e.type === 'assigned' && e.from === 'c');
    await waitFor(() => events.some((e) => e.type === 'forgotten' && e.shard === 'c'), 'the forgotten event');
    expect(events.findIndex((e) => e.type === 'forgotten' && e.shard === 'c')).toBeGreaterThan(lastMove);
    const fenceAt = events.findIndex((e) => e.type === 'fenced' && e.shard === 'c');
    const firstMove = events.findIndex((e) => e.type === 'assigned' && e.from === 'c');
    expect(fenceAt).toBeGreaterThan(-1);
    expect(firstMove).toBeGreaterThan(fenceAt);
    const ring = hashRing(['a', 'b']);
    for (const name of ofC) {
      const cm = server.get<V1ConfigMap>('v1/configmaps', 'default', name)!;
      expect(ownerOf(cm)).toBe(ring.ownerOf(`default/${name}`));
      expect(drained(cm)).toBe(false);
    }
    // Objects of live members did not move.
    expect(events.filter((e) => e.type === 'assigned' && e.from !== undefined && e.from !== 'c')).toEqual([]);
  }, 30_000);

  it('a joining member gets objects only through a drain: marked first, relabelled once the owner lets go', async () => {
    await member('d', 3_600);
    const ring = hashRing(['a', 'b', 'd']);
    const toD = configMaps().filter((cm) => ring.ownerOf(`default/${cm.metadata!.name!}`) === 'd');
    expect(toD.length / 300).toBeGreaterThan(0.2);
    await waitFor(() => toD.every((cm) => drained(server.get<V1ConfigMap>('v1/configmaps', 'default', cm.metadata!.name!)!)), 'the drain labels', 20_000);
    // Marked, not moved: the old owner keeps its label until it lets go.
    for (const cm of toD) expect(ownerOf(server.get<V1ConfigMap>('v1/configmaps', 'default', cm.metadata!.name!)!)).not.toBe('d');
    expect(configMaps().filter(drained)).toHaveLength(toD.length);
    // Play the old owners: release half of them.
    const released = toD.slice(0, Math.ceil(toD.length / 2));
    for (const cm of released) await server.patch('v1/configmaps', 'default', cm.metadata!.name!, { metadata: { labels: { [L.shard]: null, [L.drain]: null } } });
    await waitFor(() => released.every((cm) => ownerOf(server.get<V1ConfigMap>('v1/configmaps', 'default', cm.metadata!.name!)!) === 'd'), 'released objects to go to d', 20_000);
    const still = toD.slice(released.length).map((cm) => server.get<V1ConfigMap>('v1/configmaps', 'default', cm.metadata!.name!)!);
    expect(still.every((cm) => drained(cm) && ownerOf(cm) !== 'd')).toBe(true);
    // As with the assignments, the server may hold the last drain labels a moment before the sharder has read their answers.
    await waitFor(() => events.filter((e) => e.type === 'draining').length >= toD.length, 'an event per drain');
    expect(events.filter((e) => e.type === 'draining')).toHaveLength(toD.length);
    expect(errors).toEqual([]);
  }, 30_000);

  it('a new object is assigned as it appears; unsubscribing stops every write', async () => {
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: 'default' } });
    await waitFor(() => ownerOf(server.get<V1ConfigMap>('v1/configmaps', 'default', 'late')!), 'the new object to be labelled', 10_000);
    sub!.unsubscribe();
    const before = events.length;
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later', namespace: 'default' } });
    const rv = Number(server.resourceVersion());
    // Another write goes through the same server after ours; the sharder, stopped, must not have labelled it.
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marker', namespace: 'default' } });
    expect(Number(server.resourceVersion())).toBe(rv + 1);
    expect(ownerOf(server.get<V1ConfigMap>('v1/configmaps', 'default', 'later')!)).toBeUndefined();
    expect(events.length).toBe(before);
  }, 30_000);

  it.each([
    ['controller', { controller: 'Bad_Name' }],
    ['identity', { identity: '' }],
    ['leaseNamespace', { leaseNamespace: '' }],
    ['namespace', { namespace: '' }],
    ['renewDeadline', { leaseDuration: 1_000, renewDeadline: 1_000 }],
    ['virtualNodes', { virtualNodes: 200_000 }],
    ['concurrency', { concurrency: 0 }],
    ['ringKey', { ringKey: 'name' }],
    ['scheduler', { scheduler: {} }],
    ['unknown option "lease"', { lease: 'x' }],
  ])('rejects a bad %s up front', (name, bad) => {
    const make = (): unknown => sharder({ kc: server.kubeConfig(), resource: 'v1/configmaps', controller: 'c', leaseNamespace: 'shards', identity: 'x', ...bad } as never);
    expect(make).toThrow(TypeError);
    expect(make).toThrow(name);
  });
});

describe('sharder failures (simulator)', () => {
  it('LT-53: label writes refused over and over are reported once per object, not once per try', async () => {
    const R = shardLabels('refuser');
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'refused' } });
    for (let i = 0; i < 3; i++) await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'refused' } });
    await member('a', 3_600, { namespace: 'refused', controller: 'refuser' });
    // Twenty refusals over three objects: some object is refused many times in a row.
    server.faults.inject({ type: 'status', status: 403 }, { verb: 'patch', resource: 'v1/configmaps', times: 20 });
    const errors: Error[] = [];
    const sub = sharder({
      kc: server.kubeConfig(),
      resource: 'v1/configmaps',
      namespace: 'refused',
      controller: 'refuser',
      leaseNamespace: 'refused',
      identity: 'sharder-1',
      leaseDuration: 2_000,
      renewDeadline: 1_500,
      onError: (e) => errors.push(e),
    }).subscribe();
    try {
      await waitFor(() => server.faults.pending() === 0, 'every refusal to be used', 20_000);
      await waitFor(() => server.list<V1ConfigMap>('v1/configmaps', 'refused').every((cm) => cm.metadata?.labels?.[R.shard] === 'a'), 'the labels once writes pass', 20_000);
      // Reported, but at most once per object in the throttle's minute, each naming its object.
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.length).toBeLessThanOrEqual(3);
      const keys = errors.map((e) => /the reconcile of (refused\/cm-\d)/.exec(e.message)?.[1]);
      expect(keys.every((k) => k !== undefined)).toBe(true);
      expect(new Set(keys).size).toBe(keys.length);
    } finally {
      sub.unsubscribe();
    }
  }, 60_000);

  it('forgets a departed member whose last object went while its Lease was being taken over', async () => {
    const W = shardLabels('waker');
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'waking' } });
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'last', namespace: 'waking', labels: { [W.shard]: 'x' } } });
    // x's Lease is never renewed: a second after the sharder first sees it, x is gone.
    await member('x', 1, { namespace: 'waking', controller: 'waker' });
    await member('y', 3_600, { namespace: 'waking', controller: 'waker' });
    // The write that takes x's Lease over gets no answer until the sharder gives up on it.
    server.faults.inject({ type: 'stall' }, { verb: 'update', resource: 'coordination.k8s.io/v1/leases' });
    const seen: ShardingEvent[] = [];
    const sub = sharder({
      kc: server.kubeConfig(),
      resource: 'v1/configmaps',
      namespace: 'waking',
      controller: 'waker',
      leaseNamespace: 'waking',
      identity: 'sharder-w',
      leaseDuration: 2_000,
      renewDeadline: 1_500,
      requestTimeoutMs: 2_000,
      onError: () => undefined,
    }).subscribe((e) => seen.push(e));
    try {
      await waitFor(() => server.faults.pending() === 0, "the write taking x's Lease over to stall", 20_000);
      // x's last object goes while that write hangs: no object is left to move, and none to wake the sharder later.
      await server.delete('v1/configmaps', 'waking', 'last');
      await waitFor(() => seen.some((e) => e.type === 'forgotten' && e.shard === 'x'), 'x to be forgotten', 20_000);
      expect(server.get<Lease>('coordination.k8s.io/v1/leases', 'waking', 'x')).toBeUndefined();
    } finally {
      sub.unsubscribe();
    }
  }, 60_000);

  it('is woken, not polled, when the fence write of a departed member ends: forgets it with every delayed action held', async () => {
    const H = shardLabels('holder');
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'held' } });
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'last', namespace: 'held', labels: { [H.shard]: 'x' } } });
    // x released its Lease: gone from the start, with no timer needed to see it.
    await member('x', 3_600, { namespace: 'held', controller: 'holder', holder: '' });
    await member('y', 3_600, { namespace: 'held', controller: 'holder' });
    server.faults.inject({ type: 'stall' }, { verb: 'update', resource: 'coordination.k8s.io/v1/leases' });
    const seen: ShardingEvent[] = [];
    const sub = sharder({
      kc: server.kubeConfig(),
      resource: 'v1/configmaps',
      namespace: 'held',
      controller: 'holder',
      leaseNamespace: 'held',
      identity: 'sharder-h',
      requestTimeoutMs: 2_000,
      scheduler: held,
      onError: () => undefined,
    }).subscribe((e) => seen.push(e));
    try {
      await waitFor(() => server.faults.pending() === 0, "the write taking x's Lease over to stall", 20_000);
      // x's last object goes while that write hangs: its deletion asks for x's Lease too early, during the write.
      await server.delete('v1/configmaps', 'held', 'last');
      await waitFor(() => seen.some((e) => e.type === 'forgotten' && e.shard === 'x'), 'x to be forgotten', 20_000);
      expect(server.get<Lease>('coordination.k8s.io/v1/leases', 'held', 'x')).toBeUndefined();
    } finally {
      sub.unsubscribe();
    }
  }, 60_000);

  it('is woken, not polled, when the move of a departed member\'s last object ends: forgets it after the move with every delayed action held', async () => {
    const V = shardLabels('vacater');
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vacating' } });
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'last', namespace: 'vacating', labels: { [V.shard]: 'x' } } });
    await member('x', 3_600, { namespace: 'vacating', controller: 'vacater', holder: '' });
    await member('y', 3_600, { namespace: 'vacating', controller: 'vacater' });
    // The answer to the move comes slowly: the watch event of the moved object asks for x's Lease while the move is in flight.
    server.faults.inject({ type: 'trickle', bytesPerChunk: 64, intervalMs: 50 }, { verb: 'patch', resource: 'v1/configmaps' });
    const seen: ShardingEvent[] = [];
    const sub = sharder({
      kc: server.kubeConfig(),
      resource: 'v1/configmaps',
      namespace: 'vacating',
      controller: 'vacater',
      leaseNamespace: 'vacating',
      identity: 'sharder-v',
      requestTimeoutMs: 10_000,
      scheduler: held,
      onError: () => undefined,
    }).subscribe((e) => seen.push(e));
    try {
      await waitFor(() => seen.some((e) => e.type === 'forgotten' && e.shard === 'x'), 'x to be forgotten', 20_000);
      expect(seen.map((e) => e.type).filter((t) => t === 'assigned' || t === 'forgotten')).toEqual(['assigned', 'forgotten']);
      expect(server.get<V1ConfigMap>('v1/configmaps', 'vacating', 'last')?.metadata?.labels?.[V.shard]).toBe('y');
      expect(server.get<Lease>('coordination.k8s.io/v1/leases', 'vacating', 'x')).toBeUndefined();
    } finally {
      sub.unsubscribe();
    }
  }, 60_000);

  it('moves a departed member\'s object to its owner on the ring as it is once the fence is written, not as it was before', async () => {
    const M = shardLabels('mover');
    // An object that y owns while y is alone, and z once z joins.
    const name = Array.from({ length: 100 }, (_, i) => `cm-${i}`).find((n) => hashRing(['y', 'z']).ownerOf(`moving/${n}`) === 'z')!;
    await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'moving' } });
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'moving', labels: { [M.shard]: 'x' } } });
    // x released its Lease: it is gone from the start.
    await member('x', 3_600, { namespace: 'moving', controller: 'mover', holder: '' });
    await member('y', 3_600, { namespace: 'moving', controller: 'mover' });
    // The answer to the write that takes x's Lease over comes slowly, well within the renew deadline.
    server.faults.inject({ type: 'trickle', bytesPerChunk: 32, intervalMs: 100 }, { verb: 'update', resource: 'coordination.k8s.io/v1/leases' });
    const seen: ShardingEvent[] = [];
    const sub = sharder({
      kc: server.kubeConfig(),
      resource: 'v1/configmaps',
      namespace: 'moving',
      controller: 'mover',
      leaseNamespace: 'moving',
      identity: 'sharder-m',
      leaseDuration: 30_000,
      renewDeadline: 20_000,
      requestTimeoutMs: 30_000,
      onError: () => undefined,
    }).subscribe((e) => seen.push(e));
    try {
      await waitFor(() => server.faults.pending() === 0, "the write taking x's Lease over to be answered slowly", 20_000);
      // z joins while that answer trickles in.
      await member('z', 3_600, { namespace: 'moving', controller: 'mover' });
      await waitFor(() => seen.some((e) => e.type === 'assigned' && e.from === 'x'), "x's object to move", 20_000);
      expect(seen.find((e) => e.type === 'assigned' && e.from === 'x')).toEqual({ type: 'assigned', key: `moving/${name}`, shard: 'z', from: 'x' });
      expect(seen.filter((e) => e.type === 'draining')).toEqual([]);
      expect(server.get<V1ConfigMap>('v1/configmaps', 'moving', name)?.metadata?.labels?.[M.shard]).toBe('z');
    } finally {
      sub.unsubscribe();
    }
  }, 60_000);
});
