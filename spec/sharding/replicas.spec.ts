/**
 * Three replicas of one sharded controller, each its own Node process running the built package, share
 * 1 000 ConfigMaps on the simulator: the shares are even, a SIGKILLed replica's objects move to the others
 * within its lease duration plus a sharder pass, a joining replica takes about a third through drains, and
 * the reconcile log every process stamps on the one machine clock never shows two replicas on one object at
 * once.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lease } from '../../src/leaderelection/index.js';
import { shardLabels } from '../../src/sharding/index.js';
import { hashRing } from '../../src/sharding/ring.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { Rng } from '../helpers/random.js';
import { waitFor } from '../helpers/waitFor.js';
import { handedOver, now, overlapping, ShardReplica, works, type ShardJoin } from './replicas.js';

const OBJECTS = 1_000;
const CONTROLLER = 'checker';
const L = shardLabels(CONTROLLER);
const TIMING = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 } as const;
/** Each replica's seed for the durations of its work. */
const seeds = new Rng(20);

let server: ApiServer;
let replicas: ShardReplica[] = [];

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 1_000 });
  await server.create('v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shards' } });
  for (let i = 0; i < OBJECTS; i++) {
    await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'default' }, data: { i: String(i) } });
  }
  replicas = ['s0', 's1', 's2', 's3'].map((n) => new ShardReplica(n));
  await Promise.all(replicas.map((r) => r.ready()));
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.shutdown()));
  await server?.close();
});

const join = (r: ShardReplica): void => {
  const cmd: ShardJoin = {
    kubeconfig: server.kubeConfigYaml(),
    namespace: 'default',
    controller: CONTROLLER,
    leaseNamespace: 'shards',
    ...TIMING,
    concurrency: 4,
    resyncPeriod: 2_000,
    workMs: 20,
    seed: seeds.int(0, 2 ** 31),
  };
  r.join(cmd);
};

/** Objects per shard label, from the server; drained ones counted apart. */
function tally(): { readonly by: Map<string, string[]>; readonly unassigned: number; readonly draining: number } {
  const by = new Map<string, string[]>();
  let unassigned = 0;
  let draining = 0;
  for (const cm of server.list<V1ConfigMap>('v1/configmaps', 'default')) {
    const labels = cm.metadata?.labels ?? {};
    const owner = labels[L.shard];
    if (labels[L.drain] !== undefined) draining++;
    if (owner === undefined) unassigned++;
    else by.set(owner, [...(by.get(owner) ?? []), `default/${cm.metadata!.name!}`]);
  }
  return { by, unassigned, draining };
}

/** Waits check every 50 ms: a server-side count is not free. */
const POLL = { everyMs: 50 };

/** Settled: every object labelled, none draining, and every replica reconciled what is labelled for it since `since`. */
function settled(alive: readonly ShardReplica[], since: number): Map<string, string[]> | undefined {
  const t = tally();
  if (t.unassigned > 0 || t.draining > 0) return undefined;
  // Every object where the ring over the live replicas puts it: a moment without drain labels mid-pass is not enough.
  const ring = hashRing(alive.map((r) => r.name));
  for (const [id, keys] of t.by) if (keys.some((k) => ring.ownerOf(k) !== id)) return undefined;
  for (const r of alive) {
    const done = r.reconciledSince(since);
    if (!(t.by.get(r.name) ?? []).every((k) => done.has(k))) return undefined;
  }
  return t.by;
}

/** When a survivor's sharder took `dead`'s Lease over, after `since`. */
function fenced(survivors: readonly ShardReplica[], dead: ShardReplica, since: number): number | undefined {
  return survivors.flatMap((r) => r.lines).find((l) => l.event === 'fenced' && l.shard === dead.name && l.t > since)?.t;
}

/**
 * When `r` last renewed its member Lease, on its own clock. Its Lease runs out a lease duration after its last
 * renewal, which can be any time up to a slow renewal before a kill; one still in flight lands later, so this is no
 * later than the last. Only the processes' clocks drifting apart can put it after.
 */
function lastRenewal(r: ShardReplica): number {
  return Date.parse(server.get<Lease>('coordination.k8s.io/v1/leases', 'shards', r.name)!.spec!.renewTime!);
}

function unexpectedErrors(list: readonly ShardReplica[]): string[] {
  // Connection failures are what a kill inflicts on the survivors' watches; anything else is a bug.
  return list.flatMap((r) => r.lines.filter((l) => l.event === 'error' && l.name !== 'ConnectionError').map((l) => `${r.name}: ${l.name}: ${l.message}`));
}

describe('sharded controller across processes (simulator)', () => {
  it('three replicas split 1 000 objects within 15 % of the mean, each reconciling exactly its share', async () => {
    const start = now();
    const three = replicas.slice(0, 3);
    for (const r of three) join(r);
    const by = await waitFor(() => settled(three, start), 'the three shares to settle', 60_000, POLL);
    const counts = three.map((r) => by.get(r.name)?.length ?? 0);
    const mean = OBJECTS / 3;
    const spread = Math.max(...counts.map((c) => Math.abs(c - mean) / mean));
    console.log(`spread at ${OBJECTS} objects: ${three.map((r, i) => `${r.name} ${counts[i]}`).join(', ')} (max ${(spread * 100).toFixed(1)} % off the mean), settled in ${(now() - start).toFixed(0)} ms`);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(OBJECTS);
    expect(spread).toBeLessThanOrEqual(0.15);
    // Each replica's memory is its share: its informer caches exactly the objects labelled for it.
    for (const r of three) {
      const mine = [...(by.get(r.name) ?? [])].sort();
      // A release reaches the releasing replica's watch a moment after the server: ask again until it has.
      let cached: readonly string[] = [];
      await waitFor(async () => (cached = await r.cache()).join() === mine.join(), `${r.name}'s cache to hold exactly its share`, 10_000, { describe: () => `${cached.length} cached, ${mine.length} labelled for it` });
    }
    expect(three.filter((r) => r.sharding)).toHaveLength(1);
  }, 90_000);

  it('a SIGKILLed replica\'s objects move to the others once its Lease ran out and the sharder fenced it', async () => {
    const three = replicas.slice(0, 3);
    // Kill a replica that does not run the sharder: the sharder's own failover is the leader election's.
    const victim = three.find((r) => !r.sharding)!;
    const survivors = three.filter((r) => r !== victim);
    const before = tally().by.get(victim.name)!;
    const renewedAt = lastRenewal(victim);
    victim.kill();
    const killedAt = victim.killedAt!;
    const fencedAt = await waitFor(() => fenced(survivors, victim, killedAt), `the sharder to take ${victim.name}'s Lease over`, 30_000, POLL);
    await waitFor(() => !tally().by.has(victim.name), `${victim.name}'s objects to move`, 30_000, POLL);
    const moved = now() - killedAt;
    const detected = fencedAt - killedAt;
    const by = await waitFor(() => settled(survivors, killedAt), 'the two shares to settle', 30_000, POLL);
    const settledIn = now() - killedAt;
    console.log(`after SIGKILL of ${victim.name} (${before.length} objects, lease ${TIMING.leaseDuration} ms): Lease taken over after ${detected.toFixed(0)} ms, relabelled within ${moved.toFixed(0)} ms (a pass of ${(moved - detected).toFixed(0)} ms), all reconciled by the survivors within ${settledIn.toFixed(0)} ms`);
    // Gone once its Lease stood still for a lease duration (seen through a watch), not before; that it is dropped at
    // that moment is pinned in virtual time (members.spec.ts), and the fence comes before any move (sharder.spec.ts).
    expect(fencedAt - renewedAt).toBeGreaterThan(TIMING.leaseDuration - 100);
    expect(survivors.map((r) => by.get(r.name)?.length ?? 0).reduce((a, b) => a + b, 0)).toBe(OBJECTS);
    expect(survivors.some((r) => r.lines.some((l) => l.event === 'fenced' && l.shard === victim.name))).toBe(true);
  }, 90_000);

  it('a joining replica takes about a third, each object only after its old owner let it go', async () => {
    const alive = replicas.filter((r) => r.killedAt === undefined && r.lines.some((l) => l.event === 'joined'));
    const newcomer = replicas[3]!;
    const start = now();
    join(newcomer);
    const all = [...alive, newcomer];
    const by = await waitFor(() => settled(all, start) && (settled(all, start)!.get(newcomer.name)?.length ?? 0) > 0 ? settled(all, start) : undefined, 'the newcomer to take its share', 60_000, POLL);
    const share = (by.get(newcomer.name)?.length ?? 0) / OBJECTS;
    // Every object it got came through a release by its previous owner. An old owner writes its line once the server
    // answered its release, which can reach this process after the newcomer's reconcile of that object.
    const releasedSince = () => alive.flatMap((r) => r.lines.filter((l) => l.event === 'released' && l.t > start));
    const released = await waitFor(() => releasedSince().length >= by.get(newcomer.name)!.length && releasedSince(), 'a release line for every object the newcomer got', 10_000, {
      ...POLL,
      describe: () => `${releasedSince().length} released, ${by.get(newcomer.name)!.length} taken`,
    });
    console.log(`${newcomer.name} joined two replicas and took ${(share * 100).toFixed(1)} % (${by.get(newcomer.name)!.length} objects) in ${(now() - start).toFixed(0)} ms; ${released.length} released by their old owners`);
    expect(share).toBeGreaterThan(0.22);
    expect(share).toBeLessThan(0.45);
  }, 90_000);

  it('killing the replica that runs the sharder: another takes the sharder over and moves the dead share', async () => {
    const alive = replicas.filter((r) => r.killedAt === undefined && r.lines.some((l) => l.event === 'joined'));
    const leader = alive.find((r) => r.sharding)!;
    expect(leader).toBeDefined();
    const survivors = alive.filter((r) => r !== leader);
    const count = tally().by.get(leader.name)?.length ?? 0;
    const renewedAt = lastRenewal(leader);
    leader.kill();
    const killedAt = leader.killedAt!;
    const fencedAt = await waitFor(() => fenced(survivors, leader, killedAt), `the new sharder to take ${leader.name}'s Lease over`, 30_000, POLL);
    await waitFor(() => !tally().by.has(leader.name), `${leader.name}'s objects to move`, 30_000, POLL);
    const moved = now() - killedAt;
    await waitFor(() => settled(survivors, killedAt), 'the remaining shares to settle', 30_000, POLL);
    const takeover = survivors.flatMap((r) => r.lines.filter((l) => l.event === 'sharder' && l.leading === true && l.t > killedAt)).map((l) => l.t - killedAt);
    const detected = fencedAt - killedAt;
    console.log(`after SIGKILL of the sharder ${leader.name} (${count} objects): sharder taken over after ${takeover[0]?.toFixed(0)} ms, its Lease after ${detected.toFixed(0)} ms, objects relabelled within ${moved.toFixed(0)} ms (a pass of ${(moved - detected).toFixed(0)} ms)`);
    expect(takeover.length).toBeGreaterThanOrEqual(1);
    // The sharder's failover and the member's expiry run side by side; each is pinned in virtual time (elector.spec.ts,
    // members.spec.ts); here, not before the lease ran out.
    expect(fencedAt - renewedAt).toBeGreaterThan(TIMING.leaseDuration - 100);
  }, 90_000);

  it("the Leases of killed replicas are deleted once no object carries their label", async () => {
    const killed = replicas.filter((r) => r.killedAt !== undefined).map((r) => r.name);
    expect(killed.length).toBe(2);
    await waitFor(() => killed.every((n) => server.get('coordination.k8s.io/v1/leases', 'shards', n) === undefined), 'the dead Leases to go', 20_000, POLL);
    const left = server.list<{ metadata: { name: string } }>('coordination.k8s.io/v1/leases', 'shards').map((l) => l.metadata.name).sort();
    expect(left).toEqual([`${CONTROLLER}.sharder`, ...replicas.filter((r) => r.killedAt === undefined).map((r) => r.name)].sort());
  }, 30_000);

  it('over the whole run, no object was ever reconciled by two replicas at once', () => {
    const list = works(replicas, now());
    const moves = handedOver(list);
    console.log(`${list.length} reconciles logged; ${moves} objects were reconciled by more than one replica over the run, never at the same time`);
    // The check must have hand-overs to look at, or it proves nothing.
    expect(moves).toBeGreaterThan(300);
    expect(overlapping(list)).toBeUndefined();
    expect(unexpectedErrors(replicas)).toEqual([]);
  });
});
