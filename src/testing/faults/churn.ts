import type { ResourceType } from '../storage/resources.js';
import { StatusError } from '../server/status.js';
import type { Storage } from '../storage/storage.js';
import { describeValue } from '../../options/validate.js';

/** Options of `server.churn()`. */
export interface ChurnOptions {
  /** The resource to churn. @default 'v1/pods' */
  readonly resource?: string;
  /** Namespace of the objects (ignored for cluster-scoped resources). @default 'default' */
  readonly namespace?: string;
  /** Objects to create. @default 0 */
  readonly creates?: number;
  /**
   * Updates to make to live objects (pre-existing ones in the namespace
   * included). A pod update starts the pod or flips its readiness, its whole
   * status kept coherent; other objects get a new `spec.value`. @default 0
   */
  readonly updates?: number;
  /** Deletions of live objects (pre-existing ones in the namespace included). @default 0 */
  readonly deletes?: number;
  /** Writes per second; `Infinity` writes as fast as the event loop allows. @default 1000 */
  readonly perSecond?: number;
  /** Prefix of created objects' names. @default 'churn-' */
  readonly namePrefix?: string;
  /** Seed for the choice of operations and objects, for reproducible runs. @default a random seed */
  readonly seed?: number;
}

const TICK_MS = 10;
const MAX_PER_TICK = 5_000;
const UNBOUNDED_BATCH = 1_000;

function count(opts: ChurnOptions, field: 'creates' | 'updates' | 'deletes'): number {
  const v = opts[field] ?? 0;
  if (!Number.isSafeInteger(v) || v < 0) throw new TypeError(`churn: ${field} must be a non-negative integer, got ${describeValue(opts[field])}`);
  return v;
}

/** mulberry32: small, fast, good enough to pick operations reproducibly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A running churn: writes through the storage at a steady rate until its
 * counts are used up or it is stopped.
 */
export class Churn {
  /** Resolves with what was done once the counts are used up or `stop()` is called. */
  readonly done: Promise<{ readonly creates: number; readonly updates: number; readonly deletes: number }>;
  // Writes go straight to the storage: churn measures the server, not HTTP.
  readonly #storage: Storage;
  readonly #type: ResourceType;
  readonly #namespace: string;
  readonly #prefix: string;
  readonly #perSecond: number;
  // Seeded so a benchmark run can be repeated write for write.
  readonly #random: () => number;
  // Lets the server forget a finished churn.
  readonly #onEnd: () => void;
  // Remaining counts per operation.
  #creates: number;
  #updates: number;
  #deletes: number;
  readonly #done = { creates: 0, updates: 0, deletes: 0 };
  // Names of live objects, with their index, so a random pick and a removal are O(1).
  readonly #live: string[] = [];
  readonly #liveIndex = new Map<string, number>();
  // Suffix of the next created name.
  #nextName = 0;
  // The rate is kept against this start, so a slow tick is caught up by the next.
  readonly #started = Date.now();
  // The pending tick, cleared by stop().
  #timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #stopped = false;
  // Settles `done`.
  #resolve!: (r: Awaited<Churn['done']>) => void;

  /**
   * Use `server.churn()`.
   * @param storage the storage to write to.
   * @param type the resource.
   * @param opts validated here.
   * @param onEnd called once when the churn ends.
   */
  constructor(storage: Storage, type: ResourceType, opts: ChurnOptions, onEnd: () => void) {
    if (opts === null || typeof opts !== 'object') throw new TypeError(`churn: options must be an object, got ${describeValue(opts)}`);
    this.#creates = count(opts, 'creates');
    this.#updates = count(opts, 'updates');
    this.#deletes = count(opts, 'deletes');
    const perSecond = opts.perSecond ?? 1000;
    if (typeof perSecond !== 'number' || !(perSecond > 0)) throw new TypeError(`churn: perSecond must be a positive number or Infinity, got ${describeValue(opts.perSecond)}`);
    const ns = opts.namespace ?? 'default';
    if (typeof ns !== 'string' || ns === '') throw new TypeError(`churn: namespace must be a non-empty string, got ${describeValue(opts.namespace)}`);
    const prefix = opts.namePrefix ?? 'churn-';
    if (typeof prefix !== 'string' || !/^[a-z0-9]([-a-z0-9.]*)$/.test(prefix)) {
      throw new TypeError(`churn: namePrefix must start a lowercase DNS name, got ${describeValue(opts.namePrefix)}`);
    }
    if (opts.seed !== undefined && !Number.isInteger(opts.seed)) throw new TypeError(`churn: seed must be an integer, got ${describeValue(opts.seed)}`);
    this.#storage = storage;
    this.#type = type;
    this.#namespace = type.namespaced ? ns : '';
    this.#prefix = prefix;
    this.#perSecond = perSecond;
    this.#random = prng(opts.seed ?? Math.floor(Math.random() * 2 ** 32));
    this.#onEnd = onEnd;
    for (const o of storage.list(type, type.namespaced ? ns : undefined)) this.#addLive(o.name);
    this.done = new Promise<Awaited<Churn['done']>>((resolve) => (this.#resolve = resolve));
    this.#schedule();
  }

  /** Stops writing; `done` resolves with what was done so far. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer as NodeJS.Timeout);
      clearImmediate(this.#timer as NodeJS.Immediate);
    }
    this.#onEnd();
    this.#resolve({ ...this.#done });
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#perSecond === Infinity ? setImmediate(() => this.#tick()) : setTimeout(() => this.#tick(), TICK_MS);
  }

  #tick(): void {
    const total = this.#done.creates + this.#done.updates + this.#done.deletes;
    const due =
      this.#perSecond === Infinity ? UNBOUNDED_BATCH : Math.min(MAX_PER_TICK, Math.floor(((Date.now() - this.#started) * this.#perSecond) / 1000) - total);
    for (let i = 0; i < due; i++) {
      if (!this.#step()) {
        this.stop();
        return;
      }
    }
    this.#schedule();
  }

  #addLive(name: string): void {
    if (this.#liveIndex.has(name)) return;
    this.#liveIndex.set(name, this.#live.length);
    this.#live.push(name);
  }

  #removeLive(name: string): void {
    const i = this.#liveIndex.get(name);
    if (i === undefined) return;
    const last = this.#live.pop() as string;
    if (last !== name) {
      this.#live[i] = last;
      this.#liveIndex.set(last, i);
    }
    this.#liveIndex.delete(name);
  }

  /** Makes one write; false when nothing more can be done. */
  #step(): boolean {
    for (;;) {
      const live = this.#live.length;
      const c = this.#creates;
      const u = live > 0 ? this.#updates : 0;
      // Keep one object alive while updates remain and nothing more will be created.
      const d = live > 1 || (live === 1 && (this.#updates === 0 || c > 0)) ? this.#deletes : 0;
      const sum = c + u + d;
      if (sum === 0) return false;
      const r = this.#random() * sum;
      try {
        if (r < c) this.#create();
        else if (r < c + u) this.#update();
        else this.#delete();
        return true;
      } catch (err) {
        // Someone else changed the object under us (a test's own write): forget it and pick again.
        if (!(err instanceof StatusError)) throw err;
      }
    }
  }

  #pick(): string {
    return this.#live[Math.floor(this.#random() * this.#live.length)] as string;
  }

  #create(): void {
    const name = `${this.#prefix}${this.#nextName++}`;
    this.#creates--;
    const obj = this.#type.id === 'v1/pods' ? podTemplate(name, this.#namespace) : genericTemplate(name, this.#namespace);
    this.#storage.create(this.#type, obj, this.#type.namespaced ? this.#namespace : undefined);
    this.#addLive(name);
    this.#done.creates++;
  }

  #update(): void {
    const name = this.#pick();
    const cur = this.#storage.get(this.#type, this.#namespace, name);
    if (cur === undefined) {
      this.#removeLive(name);
      throw new StatusError(404, 'NotFound', name);
    }
    const seq = this.#done.updates + 1;
    this.#updates--;
    const meta = cur.obj['metadata'] as Record<string, unknown>;
    const labels = { ...(meta['labels'] as Record<string, string> | undefined), 'rxkube.io/churn-seq': String(seq % 10) };
    const next: Record<string, unknown> = { ...cur.obj, metadata: { ...meta, labels } };
    if (this.#type.id === 'v1/pods') {
      next['status'] = podStatusAfterUpdate(cur.obj);
    } else {
      const spec = (cur.obj['spec'] as Record<string, unknown> | undefined) ?? {};
      next['spec'] = { ...spec, value: seq };
    }
    this.#storage.update(this.#type, next, this.#type.namespaced ? this.#namespace : undefined);
    this.#done.updates++;
  }

  #delete(): void {
    const name = this.#pick();
    this.#removeLive(name);
    this.#deletes--;
    try {
      this.#storage.delete(this.#type, this.#namespace, name);
    } catch (err) {
      this.#deletes++;
      throw err;
    }
    this.#done.deletes++;
  }
}

function podTemplate(name: string, namespace: string): Record<string, unknown> {
  return {
    metadata: { name, namespace, labels: { app: 'churn', 'rxkube.io/churn-seq': '0' } },
    spec: {
      nodeName: `node-${name.length % 8}`,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      serviceAccountName: 'default',
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1.0',
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
      ],
    },
    status: { phase: 'Pending' },
  };
}

type Fields = Record<string, unknown>;

/**
 * A pod's next status under churn: a pod that is not running and ready starts
 * (phase Running, every container running and ready); a running, ready pod
 * fails its readiness probe (still Running, its containers not ready), as a
 * kubelet reports them. The whole status is rewritten, so the phase, the
 * containers' states and the Ready conditions always agree; a pod never goes
 * back to Pending, which a real one does not do either.
 */
function podStatusAfterUpdate(pod: Fields): Fields {
  const status = (pod['status'] as Fields | undefined) ?? {};
  const containers = (((pod['spec'] as Fields | undefined)?.['containers'] as Fields[] | undefined) ?? []).filter((c) => typeof c['name'] === 'string');
  const previous = (status['containerStatuses'] as Fields[] | undefined) ?? [];
  const readyNow = status['phase'] === 'Running' && previous.length > 0 && previous.every((c) => c['ready'] === true);
  const ready = !readyNow;
  const now = new Date().toISOString();
  const containerStatuses = containers.map((c) => {
    const before = previous.find((p) => p['name'] === c['name']);
    const running = ((before?.['state'] as Fields | undefined)?.['running'] as Fields | undefined) ?? { startedAt: now };
    return {
      name: c['name'],
      image: c['image'],
      imageID: '',
      ready,
      started: true,
      restartCount: typeof before?.['restartCount'] === 'number' ? before['restartCount'] : 0,
      state: { running },
    };
  });
  const flag = (b: boolean): string => (b ? 'True' : 'False');
  const set: Record<string, string> = { Initialized: 'True', PodScheduled: 'True', ContainersReady: flag(ready), Ready: flag(ready) };
  const others = ((status['conditions'] as Fields[] | undefined) ?? []).filter((c) => !(String(c['type']) in set));
  const conditions = [...others, ...Object.entries(set).map(([type, value]) => ({ type, status: value }))];
  return { ...status, phase: 'Running', conditions, containerStatuses };
}

function genericTemplate(name: string, namespace: string): Record<string, unknown> {
  return {
    metadata: namespace === '' ? { name, labels: { app: 'churn' } } : { name, namespace, labels: { app: 'churn' } },
    spec: { value: 0 },
  };
}
