import { fileURLToPath } from 'node:url';
import { now, ReplicaProcess } from '../helpers/replicaProcess.js';
import { waitFor } from '../helpers/waitFor.js';

/** One line a sharded replica wrote. */
export interface ShardLine {
  /** Wall-clock ms, shared by every process on the machine. */
  readonly t: number;
  readonly id: string;
  readonly event: 'ready' | 'joined' | 'left' | 'start' | 'end' | 'member' | 'sharder' | 'released' | 'fenced' | 'cache' | 'error';
  readonly keys?: readonly string[];
  readonly key?: string;
  readonly member?: boolean;
  readonly leading?: boolean;
  readonly shard?: string;
  readonly name?: string;
  readonly message?: string;
}

/** What a replica needs to join. */
export interface ShardJoin {
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly controller: string;
  readonly leaseNamespace: string;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  readonly concurrency: number;
  readonly resyncPeriod: number;
  /** Each reconcile lasts a time up to this, drawn from a generator seeded with `seed`. */
  readonly workMs: number;
  readonly seed: number;
}

const script = fileURLToPath(new URL('./shardReplica.mjs', import.meta.url));
export { now };

/** A replica process running the package built in dist/. */
export class ShardReplica extends ReplicaProcess<ShardLine> {
  constructor(name: string) {
    super(script, name);
  }

  join(cmd: ShardJoin): void {
    this.send({ op: 'join', ...cmd });
  }

  /** Asks for the keys in its informer's cache; they arrive as a `cache` line. */
  async cache(timeoutMs = 10_000): Promise<readonly string[]> {
    const seen = this.lines.filter((l) => l.event === 'cache').length;
    this.send({ op: 'cache' });
    const line = await waitFor(() => this.lines.filter((l) => l.event === 'cache')[seen], `${this.name}'s cache`, timeoutMs);
    return line.keys ?? [];
  }

  /** True while its last membership line says member (and it was not killed). */
  get member(): boolean {
    return this.killedAt === undefined && this.lines.filter((l) => l.event === 'member').at(-1)?.member === true;
  }

  /** True while its last sharder line says leading (and it was not killed). */
  get sharding(): boolean {
    return this.killedAt === undefined && this.lines.filter((l) => l.event === 'sharder').at(-1)?.leading === true;
  }

  /** Keys it started a reconcile of after `t`. */
  reconciledSince(t: number): Set<string> {
    return new Set(this.lines.filter((l) => l.event === 'start' && l.t > t).map((l) => l.key!));
  }

  /** Asks it to leave and exit; kills it if it has not exited within `timeoutMs`. */
  override shutdown(timeoutMs = 15_000): Promise<void> {
    return super.shutdown(timeoutMs);
  }
}

/** One reconcile of one key by one replica. */
export interface Work {
  readonly id: string;
  readonly key: string;
  readonly start: number;
  /** Its end line, the SIGKILL, or the end of observation. */
  readonly end: number;
}

/** Every reconcile the replicas logged, with unended ones closed at the kill or at `until`. */
export function works(replicas: readonly ShardReplica[], until: number): Work[] {
  const out: Work[] = [];
  for (const r of replicas) {
    const open = new Map<string, number>();
    for (const l of r.lines) {
      if (l.event === 'start') open.set(l.key!, l.t);
      else if (l.event === 'end' && open.has(l.key!)) {
        out.push({ id: r.name, key: l.key!, start: open.get(l.key!)!, end: l.t });
        open.delete(l.key!);
      }
    }
    for (const [key, start] of open) out.push({ id: r.name, key, start, end: r.killedAt ?? until });
  }
  return out;
}

/** The first two reconciles of one key by different replicas that overlap in time, described; undefined if none. */
export function overlapping(list: readonly Work[]): string | undefined {
  const byKey = new Map<string, Work[]>();
  for (const w of list) byKey.set(w.key, [...(byKey.get(w.key) ?? []), w]);
  for (const [key, ws] of byKey) {
    ws.sort((a, b) => a.start - b.start);
    let last = ws[0]!;
    for (const w of ws.slice(1)) {
      if (w.id !== last.id && w.start <= last.end) {
        return `${key}: ${last.id} reconciled ${last.start.toFixed(1)}..${last.end.toFixed(1)} and ${w.id} started at ${w.start.toFixed(1)}`;
      }
      if (w.end > last.end) last = w;
    }
  }
  return undefined;
}

/** Keys reconciled by more than one replica over the run: hand-overs the overlap check covered. */
export function handedOver(list: readonly Work[]): number {
  const who = new Map<string, Set<string>>();
  for (const w of list) who.set(w.key, (who.get(w.key) ?? new Set()).add(w.id));
  return [...who.values()].filter((s) => s.size > 1).length;
}
