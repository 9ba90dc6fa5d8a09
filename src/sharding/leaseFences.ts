import { isAlreadyExists, isConflict, isNotFound } from '../errors/api/guards.js';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import { microTime } from '../leaderelection/elector.js';
import type { Lease } from '../leaderelection/leaseLock.js';
import type { ReconcileAction } from '../controller/types.js';
import type { KubeObject } from '../store/types.js';
import type { ShardMembers } from './members.js';
import type { ResolvedSharderOptions, ShardingEvent } from './sharderOptions.js';

/** The sharder holds a departed member's Lease while it moves that member's objects. */
interface Fence {
  readonly lease: Lease;
  /** Local time the write was sent: the member cannot take its Lease back before this plus the lease duration. */
  readonly sentAt: number;
}

/**
 * The Leases of departed members: taken over (fenced) before their objects
 * move, so a member that was merely cut off cannot come back and act on
 * them, and deleted once no object carries the member's label.
 */
export class LeaseFences<T extends KubeObject> {
  readonly #c: ResolvedSharderOptions<T>;
  /** The membership last seen, undefined before the first. */
  readonly #members: () => ShardMembers | undefined;
  readonly #emit: (event: ShardingEvent) => void;
  /** Enqueues a member's key on the leases controller: a fence write or a move of its objects ended. */
  readonly #wake: (member: string) => void;
  readonly #leases: ObjectClient<Lease>;
  /** Never a member's name (identities have no '/'), so a fenced Lease never looks like its member renewed it, even when the sharder fences its own replica's Lease. */
  readonly #holder: string;
  /** The Leases this sharder holds, by member. */
  readonly #fences = new Map<string, Fence>();
  /** One fencing write per member at a time, shared by every object of that member. */
  readonly #fencing = new Map<string, Promise<boolean | number>>();
  /** Moves in flight per member: its Lease is not deleted while one is, so 'forgotten' comes after its last 'assigned'. */
  readonly #moving = new Map<string, number>();

  constructor(c: ResolvedSharderOptions<T>, members: () => ShardMembers | undefined, emit: (event: ShardingEvent) => void, wake: (member: string) => void) {
    this.#c = c;
    this.#members = members;
    this.#emit = emit;
    this.#wake = wake;
    this.#holder = `${c.identity}/sharder`;
    this.#leases = objectClient<Lease>(c.kc, 'coordination.k8s.io/v1/leases', { namespace: c.leaseNamespace, timeoutMs: c.requestTimeoutMs });
  }

  /** Holds `member`'s Lease: true when held now, a delay (ms) to try again after, false when the member is live. */
  fence(member: string, signal: AbortSignal): Promise<boolean | number> {
    if (this.fresh(member)) return Promise.resolve(true);
    let p = this.#fencing.get(member);
    if (p === undefined) {
      p = this.#takeLease(member, signal).finally(() => {
        this.#fencing.delete(member);
        this.#wake(member);
      });
      this.#fencing.set(member, p);
    }
    return p;
  }

  /** Whether the write that fenced `member` is still young enough for a move sent now (false when not fenced). */
  fresh(member: string): boolean {
    const held = this.#fences.get(member);
    return held !== undefined && this.#c.scheduler.now() < held.sentAt + this.#c.renewDeadline;
  }

  /** Runs `move`, a move of one of `member`'s objects, during which its Lease is kept. */
  async moving(member: string, move: () => Promise<void>): Promise<void> {
    this.#moving.set(member, (this.#moving.get(member) ?? 0) + 1);
    try {
      await move();
    } finally {
      const left = this.#moving.get(member)! - 1;
      if (left === 0) {
        this.#moving.delete(member);
        this.#wake(member);
      } else this.#moving.set(member, left);
    }
  }

  /**
   * Deletes the Lease of a departed member once no object carries its label, so replicas that come and go
   * (new pod names) leave nothing behind; conditional on the version last seen or written. A member that
   * comes back creates a new one. Asks to be called again after a delay when a previous sharder's fence must expire.
   */
  async forget(member: string, signal: AbortSignal): Promise<ReconcileAction> {
    const c = this.#c;
    const seen = this.#members()?.leases.get(member);
    if (seen === undefined || seen.live) return;
    // A fence being written or a move in flight: judged again when it ends, which wakes this member's key.
    if (this.#fencing.has(member) || this.#moving.has(member)) return;
    for (const k of c.objects.store.listKeys()) {
      if (c.objects.store.getByKey(k)?.metadata?.labels?.[c.labels.shard] === member) return;
    }
    const now = c.scheduler.now();
    // Someone else's fence (a previous sharder's) is theirs until it expires.
    if (seen.holder !== this.#holder && seen.holder !== '' && seen.holder !== member && seen.expiresAt > now) return { requeueAfter: seen.expiresAt - now + 10 };
    const held = this.#fences.get(member);
    const version = (held !== undefined && seen.holder === this.#holder ? held.lease : seen.lease).metadata?.resourceVersion;
    try {
      await this.#leases.delete(member, { signal, ...(version !== undefined && { preconditions: { resourceVersion: version } }) });
      this.#emit({ type: 'forgotten', shard: member });
    } catch (err) {
      // Changed since (it came back, or a newer write of ours): the next pass judges it again.
      if (!isConflict(err) && !isNotFound(err)) throw err;
    }
    this.#fences.delete(member);
  }

  async #takeLease(member: string, signal: AbortSignal): Promise<boolean | number> {
    const c = this.#c;
    const held = this.#fences.get(member);
    const seen = this.#members()?.leases.get(member);
    const now = c.scheduler.now();
    if (seen?.live === true) return false;
    if (seen !== undefined && seen.holder !== '' && seen.holder !== this.#holder && seen.expiresAt > now) return seen.expiresAt - now;
    const stamp = microTime(now);
    const spec = { holderIdentity: this.#holder, leaseDurationSeconds: Math.ceil(c.leaseDuration / 1000), acquireTime: stamp, renewTime: stamp };
    try {
      let written: Lease;
      if (seen === undefined) {
        written = await this.#leases.create(
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: member, namespace: c.leaseNamespace, labels: { [c.labels.lease]: c.controller } }, spec: { ...spec, leaseTransitions: 0 } },
          { signal },
        );
      } else {
        // Our own last write is newer than what the informer may have shown yet.
        const base = held !== undefined && seen.holder === this.#holder ? held.lease : seen.lease;
        const transitions = (base.spec?.leaseTransitions ?? 0) + (seen.holder === this.#holder ? 0 : 1);
        written = await this.#leases.replace({ ...base, spec: { ...base.spec, ...spec, leaseTransitions: transitions } }, { signal });
      }
      this.#fences.set(member, { lease: written, sentAt: now });
      if (held === undefined) this.#emit({ type: 'fenced', shard: member });
      return true;
    } catch (err) {
      if (isConflict(err) || isAlreadyExists(err)) return 0;
      throw err;
    }
  }
}
