// Bench — sharding: R replicas of shardedController (bench/shardReplica.ts,
// a process each) over the project's API-server simulator (bench/fleetServer.ts,
// this checkout's whatever build the replicas run: the server is not what is
// measured) holding M pods. Two phases per run:
// - start: from the replicas' join until every pod carries the shard label
//   of the replica the ring of all of them places it on (hashRing of this
//   checkout, default virtual nodes, as the sharder places it), none a drain
//   label, and each was reconciled by that replica (the last such
//   reconcile's start counts);
// - hand-over: one replica that holds no election Lease (does not run the
//   sharder) leaves (unsubscribes: a graceful leave); from then until each
//   of its pods carries the label of its place on the ring of the rest and
//   was reconciled by that replica.
// With BENCH_BASELINE the baseline build runs too, interleaved round by round,
// each run on a fresh server; the report gives the median of per-round ratios.
//
//   npm run bench -- sharding
//   BENCH_BASELINE=../old BENCH_REPEATS=7 npm run bench -- sharding

import { setTimeout as sleep } from 'node:timers/promises';
import { hashRing } from 'rxkube/core';
import { envNumber, wallNow, type Benchmark, type Context } from './lib/context.js';
import { MiB } from './lib/heap.js';
import { Child } from './lib/ipc.js';
import { buildLabel, builds, buildsOfRound, type Build } from './lib/library.js';
import { processCpuMs } from './lib/measuredClient.js';
import { sideRow, type Row } from './lib/report.js';
import type { FleetReady, LabelsArgs, LabelsReply } from './fleetServer.js';
import type { JoinArgs, Taken } from './shardReplica.js';

const CONTROLLER = 'bench';
const LEASE_NAMESPACE = 'shards';
const SHARD_LABEL = `shard.rxkube.io/${CONTROLLER}`;
const DRAIN_LABEL = `drain.shard.rxkube.io/${CONTROLLER}`;
/** How often the runner collects reconciles and reads the labels; the figures come from the replicas' own clocks, not from this. */
const POLL_MS = 100;

interface Sizes {
  readonly replicas: number;
  readonly pods: number;
  readonly concurrency: number;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  readonly timeoutMs: number;
}

interface ShardRun {
  /** Join → every pod labelled and reconciled by its owner, ms. */
  readonly settleMs: number;
  /** Reconciles the replicas started until then (more than the pods when objects moved as members joined). */
  readonly reconciles: number;
  /** CPU of every replica from join to settled, as the kernel counts it, ms. */
  readonly cpuMs: number;
  /** The leaver's leave → its pods relabelled and reconciled by the rest, ms. */
  readonly handOverMs: number;
  /** Pods the leaver owned. */
  readonly moved: number;
  /** The replica that left, and who held an election Lease then. */
  readonly leaver: string;
  readonly electionHolders: readonly string[];
  /** CPU of every replica over the hand-over, ms. */
  readonly handOverCpuMs: number;
  /** The largest replica's peak RSS, bytes. */
  readonly maxRssBytes: number;
}

/** One replica and what it reported: for each pod, when it last started reconciling it. */
class Replica {
  readonly child = new Child(new URL('./shardReplica.js', import.meta.url), [], ['--max-old-space-size=2048']);
  readonly last = new Map<string, number>();
  reconciles = 0;
  taken: Taken | undefined;
  readonly identity: string;
  constructor(identity: string) {
    this.identity = identity;
  }

  async take(): Promise<void> {
    const t = await this.child.request<Taken>('take', {}, 30_000);
    for (let i = 0; i < t.reconciles.length; i += 2) this.last.set(t.reconciles[i] as string, t.reconciles[i + 1] as number);
    this.reconciles += t.reconciles.length / 2;
    this.taken = t;
  }

  cpuMs(): number {
    return processCpuMs(this.child.process.pid ?? 0);
  }
}

/**
 * Polls until every pod in `scope` carries the shard label of the replica the ring of `members` places it on (as the
 * sharder computes it, so a state on the way, with a member not yet counted, does not pass), no drain label, and was
 * reconciled by that replica at or after `since`; returns the latest such reconcile's start.
 */
async function settled(server: Child, replicas: readonly Replica[], members: readonly string[], scope: (key: string) => boolean, since: number, deadline: number, what: string): Promise<number> {
  const byId = new Map(replicas.map((r) => [r.identity, r]));
  const ring = hashRing(members);
  for (;;) {
    await Promise.all(replicas.map((r) => r.take()));
    const labels = await server.request<LabelsReply>('labels', { keys: [SHARD_LABEL, DRAIN_LABEL] } satisfies LabelsArgs, 30_000);
    let latest = since;
    let missing = 0;
    let example = '';
    for (const [key, owner = null, drain = null] of labels) {
      if (!scope(key)) continue;
      const expected = ring.ownerOf(key);
      const t = owner !== expected || drain !== null ? undefined : byId.get(expected)?.last.get(key);
      if (t === undefined || t < since) {
        missing++;
        example ||= `${key} (label ${owner ?? 'none'}, ring places it on ${expected}${drain === null ? '' : ', draining'})`;
      } else if (t > latest) latest = t;
    }
    if (missing === 0) return latest;
    if (wallNow() > deadline) {
      const errors = replicas.flatMap((r) => (r.taken?.lastError === undefined ? [] : [`${r.identity}: ${r.taken.errors} errors, last ${r.taken.lastError}`]));
      throw new Error(`${what}: ${missing} pods not yet labelled and reconciled by their owner, e.g. ${example}${errors.length > 0 ? `; ${errors.join('; ')}` : ''}`);
    }
    await sleep(POLL_MS);
  }
}

async function runOnce(ctx: Context, build: Build, s: Sizes): Promise<ShardRun> {
  const server = new Child(new URL('./fleetServer.js', import.meta.url), ['--clusters=1', `--pods=${s.pods}`, '--namespaces=10'], ['--max-old-space-size=2048']);
  const replicas = Array.from({ length: s.replicas }, (_, i) => new Replica(`replica-${i}`));
  try {
    const ready = await server.next<FleetReady>(300_000);
    await Promise.all(replicas.map((r) => r.child.request('load', { build }, 60_000)));
    const join = (r: Replica): JoinArgs => ({
      kubeConfigYaml: ready.kubeConfigYamls[0] as string,
      resource: 'v1/pods',
      identity: r.identity,
      controller: CONTROLLER,
      leaseNamespace: LEASE_NAMESPACE,
      leaseDuration: s.leaseDuration,
      renewDeadline: s.renewDeadline,
      retryPeriod: s.retryPeriod,
      concurrency: s.concurrency,
    });
    const cpu0 = replicas.map((r) => r.cpuMs());
    const t0 = wallNow();
    await Promise.all(replicas.map((r) => r.child.request('join', join(r), 30_000)));
    const settledAt = await settled(server, replicas, replicas.map((r) => r.identity), () => true, t0, t0 + s.timeoutMs, `${buildLabel(build)}: start`);
    const cpu1 = replicas.map((r) => r.cpuMs());
    const reconciles = replicas.reduce((n, r) => n + r.reconciles, 0);

    // The leaver: a replica that holds no election (the sharder's), so the hand-over is not also a new election. A Lease
    // not named after a replica is an election, whatever a build names it.
    const leases = await server.request<(readonly [string, string | null])[]>('leases', { namespace: LEASE_NAMESPACE }, 30_000);
    const ids = new Set(replicas.map((r) => r.identity));
    const leading = new Set(leases.filter(([name, holder]) => !ids.has(name) && holder !== null).map(([, holder]) => holder));
    const leaver = [...replicas].reverse().find((r) => !leading.has(r.identity)) as Replica;
    const labels = await server.request<LabelsReply>('labels', { keys: [SHARD_LABEL] } satisfies LabelsArgs, 30_000);
    const moving = new Set(labels.filter(([, owner]) => owner === leaver.identity).map(([key]) => key));
    const rest = replicas.filter((r) => r !== leaver);
    const tLeave = wallNow();
    await leaver.child.request('leave', {}, 30_000);
    const handedAt = await settled(server, rest, rest.map((r) => r.identity), (key) => moving.has(key), tLeave, tLeave + s.timeoutMs, `${buildLabel(build)}: hand-over`);
    const cpu2 = replicas.map((r) => r.cpuMs());
    const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
    return {
      settleMs: settledAt - t0,
      reconciles,
      cpuMs: sum(cpu1) - sum(cpu0),
      handOverMs: handedAt - tLeave,
      moved: moving.size,
      leaver: leaver.identity,
      electionHolders: [...leading].filter((x): x is string => x !== null),
      handOverCpuMs: sum(cpu2) - sum(cpu1),
      maxRssBytes: Math.max(...replicas.map((r) => r.taken?.maxRssBytes ?? 0)),
    };
  } finally {
    await Promise.all(replicas.map((r) => r.child.close(2_000)));
    await server.request('close', {}, 30_000).catch(() => undefined);
    await server.close();
    ctx.log(`sharding: ${buildLabel(build)} run closed`);
  }
}

export const sharding: Benchmark = {
  name: 'sharding',
  description: 'sharded controller: R replica processes, M pods: join → all labelled and reconciled by their owner; one replica leaves → its pods moved and reconciled (BENCH_BASELINE: before/after)',
  async run(ctx: Context): Promise<Row[]> {
    const s: Sizes = {
      replicas: envNumber('BENCH_SHARD_REPLICAS', 3),
      pods: ctx.scaled(envNumber('BENCH_SHARD_PODS', 1_000)),
      concurrency: envNumber('BENCH_SHARD_CONCURRENCY', 4),
      // The specs' timings: short enough that a missed renewal shows within seconds; a graceful leave waits for none of them.
      leaseDuration: envNumber('BENCH_SHARD_LEASE_MS', 3_000),
      renewDeadline: envNumber('BENCH_SHARD_RENEW_MS', 2_000),
      retryPeriod: envNumber('BENCH_SHARD_RETRY_MS', 500),
      timeoutMs: envNumber('BENCH_SHARD_TIMEOUT_MS', 120_000),
    };
    if (!Number.isSafeInteger(s.replicas) || s.replicas < 2) throw new TypeError(`BENCH_SHARD_REPLICAS: expected an integer of at least 2 (one leaves), got ${s.replicas}`);
    ctx.log(`sharding: ${builds().join(' and ')} build`);
    const bench = `sharding ${s.replicas} replicas, ${s.pods} pods, concurrency ${s.concurrency}`;
    const results = new Map<Build, ShardRun[]>();
    for (let r = 0; r < ctx.repeats; r++) {
      for (const build of buildsOfRound(r)) {
        const res = await runOnce(ctx, build, s);
        ctx.log(
          `sharding: ${buildLabel(build)} round ${r + 1}: settled in ${(res.settleMs / 1000).toFixed(2)} s (${res.reconciles} reconciles, CPU ${(res.cpuMs / 1000).toFixed(2)} s), ` +
            `${res.leaver} (sharder: ${res.electionHolders.join(', ') || 'none seen'}) left: hand-over of ${res.moved} pods in ${(res.handOverMs / 1000).toFixed(2)} s (CPU ${(res.handOverCpuMs / 1000).toFixed(2)} s), peak RSS ${(res.maxRssBytes / MiB).toFixed(0)} MiB`,
        );
        results.set(build, [...(results.get(build) ?? []), res]);
      }
    }
    const rows: Row[] = [];
    for (const [build, rs] of results) {
      const kase = buildLabel(build);
      rows.push(sideRow(bench, kase, 'join → every pod labelled and reconciled by its owner', 's', rs.map((x) => x.settleMs / 1000)));
      rows.push(sideRow(bench, kase, 'reconciles until then (pods moved as members joined)', 'count', rs.map((x) => x.reconciles)));
      rows.push(sideRow(bench, kase, 'CPU of all replicas until then', 's', rs.map((x) => x.cpuMs / 1000)));
      rows.push(sideRow(bench, kase, 'one replica leaves → its pods reconciled by the rest', 's', rs.map((x) => x.handOverMs / 1000)));
      rows.push(sideRow(bench, kase, 'CPU of all replicas over the hand-over', 's', rs.map((x) => x.handOverCpuMs / 1000)));
      rows.push(sideRow(bench, kase, 'peak RSS of the largest replica', 'MiB', rs.map((x) => x.maxRssBytes / MiB)));
    }
    return rows;
  },
};
