import { fileURLToPath } from 'node:url';
import { now, ReplicaProcess } from '../helpers/replicaProcess.js';

/** One line a replica wrote. */
export interface ReplicaLine {
  /** Wall-clock ms, shared by every process on the machine. */
  readonly t: number;
  readonly run: string | undefined;
  readonly id: string;
  readonly event: 'ready' | 'joined' | 'left' | 'started' | 'stopped' | 'leader' | 'error';
  readonly leader?: string;
  readonly name?: string;
  readonly message?: string;
}

/** What a replica needs to join one election. */
export interface JoinCommand {
  readonly run: string;
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly lease: string;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  readonly releaseOnCancel?: boolean;
}

const script = fileURLToPath(new URL('./replica.mjs', import.meta.url));

/** A replica process: it runs the package built in dist/ and reports on stdout. */
export class Replica extends ReplicaProcess<ReplicaLine> {
  constructor(name: string) {
    super(script, name);
  }

  join(cmd: JoinCommand): void {
    this.send({ op: 'join', ...cmd });
  }

  leave(run: string): void {
    this.send({ op: 'leave', run });
  }

  /** Lines of one run. */
  of(run: string): ReplicaLine[] {
    return this.lines.filter((l) => l.run === run);
  }

  /** True when its last start in `run` has no stop after it (and it was not killed). */
  leading(run: string): boolean {
    if (this.killedAt !== undefined) return false;
    const own = this.of(run).filter((l) => l.event === 'started' || l.event === 'stopped');
    return own.at(-1)?.event === 'started';
  }
}

/** A leadership interval of one replica in one run. */
export interface Interval {
  readonly id: string;
  readonly start: number;
  /** onStoppedLeading, or the SIGKILL, or the end of observation. */
  readonly end: number;
  readonly how: 'stopped' | 'killed' | 'open';
}

/** Every replica's acting intervals in `run`, ordered by start. */
export function intervals(replicas: readonly Replica[], run: string, endOfObservation: number): Interval[] {
  const out: Interval[] = [];
  for (const r of replicas) {
    let start: number | undefined;
    for (const l of r.of(run)) {
      if (l.event === 'started') start = l.t;
      else if (l.event === 'stopped' && start !== undefined) {
        out.push({ id: r.name, start, end: l.t, how: 'stopped' });
        start = undefined;
      }
    }
    if (start !== undefined) {
      out.push(r.killedAt !== undefined && r.killedAt >= start
        ? { id: r.name, start, end: r.killedAt, how: 'killed' }
        : { id: r.name, start, end: endOfObservation, how: 'open' });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/** The first pair of intervals that overlap, described; undefined when none do. */
export function overlap(list: readonly Interval[]): string | undefined {
  for (let i = 1; i < list.length; i++) {
    const prev = list[i - 1]!;
    const cur = list[i]!;
    if (cur.start <= prev.end) {
      return `${prev.id} acted ${prev.start.toFixed(1)}..${prev.end.toFixed(1)} (${prev.how}) and ${cur.id} started at ${cur.start.toFixed(1)}, ${(prev.end - cur.start).toFixed(1)} ms too early`;
    }
  }
  return undefined;
}

export { now };
