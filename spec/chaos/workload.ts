import type { ApiServer } from 'rxkube/testing';
import { CHAOS } from './config.js';
import type { Rng } from '../helpers/random.js';

/** One workload operation, as a replay log would show it. */
export type OpKind = 'create' | 'update' | 'relabel' | 'delete' | 'recreate';

/** What the informers should end up holding: key → resourceVersion. */
export type State = ReadonlyMap<string, string>;

interface PodMeta {
  readonly name: string;
  readonly namespace: string;
  readonly resourceVersion: string;
  readonly labels?: Record<string, string>;
}

/**
 * A random workload over a fixed space of keys on the simulator: creates,
 * updates, deletes, delete-and-recreate under the same name (a new UID), and
 * label changes that move objects in and out of the selector. It writes
 * through the simulator's storage (no HTTP, so no injected fault touches the
 * writes) and keeps the set of live keys itself.
 */
export class Workload {
  readonly #server: ApiServer;
  // Live keys and their tier (undefined: no tier label), so every op is valid without asking the server.
  readonly #live = new Map<string, string | undefined>();
  readonly #keys: readonly string[];
  // The population populate() made, which creates and deletes then hover around.
  #target = 0;
  // Bumped on every update so each one really changes the object.
  #generation = 0;
  /** Writes the simulator refused: each is a bug in this workload or in the simulator, and fails the seed. */
  readonly refused: string[] = [];
  /** Operations done, by kind. */
  readonly counts: Record<OpKind, number> = { create: 0, update: 0, relabel: 0, delete: 0, recreate: 0 };

  constructor(server: ApiServer) {
    this.#server = server;
    const keys: string[] = [];
    for (const ns of CHAOS.namespaces) for (let i = 0; i < CHAOS.namesPerNamespace; i++) keys.push(`${ns}/p-${String(i).padStart(3, '0')}`);
    this.#keys = keys;
  }

  get liveCount(): number {
    return this.#live.size;
  }

  /** Creates `count` distinct objects drawn from the key space. */
  populate(rng: Rng, count: number): void {
    this.#target = count;
    while (this.#live.size < count) {
      const key = rng.pick(this.#keys);
      if (!this.#live.has(key)) this.#create(key, this.#tier(rng));
    }
  }

  /** One random operation. The write happens synchronously, in this turn (the simulator's storage methods do not wait). */
  step(rng: Rng): OpKind {
    const kind: OpKind =
      this.#live.size === 0
        ? 'create'
        : this.#live.size >= this.#keys.length
          ? rng.pick(['update', 'relabel', 'delete', 'recreate'] as const)
          : // Creates and deletes pull the population back towards its size after populate(), so it stays steady.
            rng.weighted(this.#live.size < this.#target ? { create: 3, update: 4, relabel: 3, delete: 2, recreate: 1 } : { create: 2, update: 4, relabel: 3, delete: 3, recreate: 1 });
    if (kind === 'create') {
      let key = rng.pick(this.#keys);
      while (this.#live.has(key)) key = rng.pick(this.#keys);
      this.#create(key, this.#tier(rng));
    } else {
      const key = this.#pickLive(rng);
      if (kind === 'update') this.#patch(key, { metadata: { annotations: { 'chaos/generation': String(++this.#generation) } } });
      else if (kind === 'relabel') {
        const tier = this.#tier(rng);
        this.#live.set(key, tier);
        this.#patch(key, { metadata: { labels: { tier: tier ?? null } } });
      } else if (kind === 'delete') this.#delete(key);
      else {
        this.#delete(key);
        this.#create(key, this.#tier(rng));
      }
    }
    this.counts[kind]++;
    return kind;
  }

  /** A write every informer sees: an update of an object inside the selector (created when there is none). */
  touchMatching(rng: Rng): void {
    const inside = [...this.#live].filter(([, tier]) => tier !== undefined && CHAOS.selectorTiers.includes(tier));
    if (inside.length === 0) {
      let key = rng.pick(this.#keys);
      while (this.#live.has(key)) key = rng.pick(this.#keys);
      this.#create(key, 'web');
      return;
    }
    const [key] = rng.pick(inside);
    this.#patch(key, { metadata: { annotations: { 'chaos/generation': String(++this.#generation) } } });
  }

  /** The server's state now, all of it and the selector's part. */
  expected(): { readonly all: State; readonly selected: State } {
    const all = new Map<string, string>();
    const selected = new Map<string, string>();
    for (const pod of this.#server.list<{ metadata: PodMeta }>('v1/pods')) {
      const m = pod.metadata;
      const key = `${m.namespace}/${m.name}`;
      all.set(key, m.resourceVersion);
      const tier = m.labels?.tier;
      if (tier !== undefined && CHAOS.selectorTiers.includes(tier)) selected.set(key, m.resourceVersion);
    }
    return { all, selected };
  }

  #tier(rng: Rng): string | undefined {
    return rng.chance(0.15) ? undefined : rng.pick(CHAOS.tiers);
  }

  #pickLive(rng: Rng): string {
    // Picking by index in the key space keeps the draw cheap; live keys are at least a third of it after populate.
    for (;;) {
      const key = rng.pick(this.#keys);
      if (this.#live.has(key)) return key;
    }
  }

  #create(key: string, tier: string | undefined): void {
    const [namespace, name] = key.split('/') as [string, string];
    this.#live.set(key, tier);
    this.#settle(
      `create ${key}`,
      this.#server.create('v1/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, ...(tier !== undefined && { labels: { tier } }) },
        spec: { containers: [{ name: 'main', image: 'busybox' }] },
      }),
    );
  }

  #patch(key: string, patch: object): void {
    const [namespace, name] = key.split('/') as [string, string];
    this.#settle(`patch ${key}`, this.#server.patch('v1/pods', namespace, name, patch));
  }

  #delete(key: string): void {
    const [namespace, name] = key.split('/') as [string, string];
    this.#live.delete(key);
    this.#settle(`delete ${key}`, this.#server.delete('v1/pods', namespace, name));
  }

  #settle(what: string, write: Promise<unknown>): void {
    write.catch((err: unknown) => this.refused.push(`${what}: ${err instanceof Error ? err.message : String(err)}`));
  }
}
