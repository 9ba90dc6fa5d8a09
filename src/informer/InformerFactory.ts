import type {
  KubeConfig,
  V1ConfigMap,
  V1DaemonSet,
  V1Deployment,
  V1Job,
  V1Lease,
  V1Namespace,
  V1Node,
  V1Pod,
  V1ReplicaSet,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { kubeSource } from '../sources/kubeSource.js';
import type { ListerWatcher, ResourceRef } from '../sources/types.js';
import type { KubeObject } from '../store/types.js';
import { CacheSyncError } from './CacheSyncError.js';
import { informer, type Informer, type InformerOptions } from './informer.js';

/** Options of one informer asked of a factory; those that name the list/watch are part of its identity. */
export interface InformerForOptions<T> extends InformerOptions<T> {
  /** Namespace to watch; omit for all namespaces. @default the factory's namespace */
  readonly namespace?: string;
  /** Server-side label selector. @default none */
  readonly labelSelector?: string;
  /** Server-side field selector. @default none */
  readonly fieldSelector?: string;
}

/** Options of {@link InformerFactory}. */
export interface InformerFactoryOptions {
  /** Namespace of every informer that does not name one. @default all namespaces */
  readonly namespace?: string;
  /** Default resync period of the informers, ms. @default 0 */
  readonly resyncPeriod?: number;
  /** Transform applied by every informer that does not set its own. @default none */
  readonly transform?: (obj: never) => unknown;
  /** Builds the ListerWatcher of a resource; replace it to read from elsewhere. @default kubeSource */
  readonly sourceFor?: (kc: KubeConfig, resource: ResourceRef, opts: { namespace?: string; labelSelector?: string; fieldSelector?: string }) => ListerWatcher<KubeObject>;
}

interface Entry {
  readonly informer: Informer<KubeObject>;
  started: boolean;
}

/**
 * Hands out one shared informer per (resource, namespace, selectors,
 * transform), so every part of a controller that watches pods shares one
 * cache and one watch.
 *
 * ## Example
 * ```ts
 * import { InformerFactory } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const factory = new InformerFactory(kc, { namespace: 'default' });
 * const pods = factory.pods();
 * const widgets = factory.informerFor('example.com/v1/widgets');
 * factory.start();
 * await factory.waitForCacheSync(AbortSignal.timeout(30_000));
 * ```
 */
export class InformerFactory {
  readonly #kc: KubeConfig;
  readonly #opts: InformerFactoryOptions;
  // Informers by identity, in creation order so start() starts them in that order.
  readonly #informers = new Map<string, Entry>();
  // Functions have no printable identity; number each transform to key informers by it.
  readonly #transformIds = new WeakMap<object, number>();
  #nextTransformId = 1;
  #shuttingDown = false;

  /**
   * @param kc where the API server is and how to authenticate.
   * @param opts factory-wide defaults.
   */
  constructor(kc: KubeConfig, opts: InformerFactoryOptions = {}) {
    if (kc === null || typeof kc !== 'object') throw new TypeError(`kc must be a KubeConfig, got ${String(kc)}`);
    if (opts.resyncPeriod !== undefined && (!Number.isFinite(opts.resyncPeriod) || opts.resyncPeriod < 0)) {
      throw new TypeError(`resyncPeriod must be a non-negative number of ms, got ${String(opts.resyncPeriod)}`);
    }
    this.#kc = kc;
    this.#opts = opts;
  }

  /**
   * The shared informer for a resource, created on first request.
   *
   * ## Example
   * ```ts
   * const widgets = factory.informerFor<Widget>('example.com/v1/widgets', { labelSelector: 'team=a' });
   * ```
   *
   * @param resource `'v1/pods'`, `'apps/v1/deployments'`, `'example.com/v1/widgets'` or the object form.
   * @param opts selectors and informer options; the first request's options win for the informer's behaviour.
   * @returns the shared informer; started by the next `start()`.
   */
  informerFor<T extends KubeObject = KubeObject>(resource: ResourceRef, opts: InformerForOptions<T> = {}): Informer<T> {
    const namespace = opts.namespace ?? this.#opts.namespace;
    const transform = opts.transform ?? (this.#opts.transform as ((obj: T) => T) | undefined);
    const id = this.#identity(resource, namespace, opts.labelSelector, opts.fieldSelector, transform);
    const existing = this.#informers.get(id);
    if (existing !== undefined) return existing.informer as unknown as Informer<T>;
    const sourceOpts = {
      ...(namespace !== undefined && { namespace }),
      ...(opts.labelSelector !== undefined && { labelSelector: opts.labelSelector }),
      ...(opts.fieldSelector !== undefined && { fieldSelector: opts.fieldSelector }),
    };
    const source = (this.#opts.sourceFor ?? kubeSource)(this.#kc, resource, sourceOpts) as ListerWatcher<T>;
    const inf = informer<T>(source, {
      ...opts,
      ...(transform !== undefined && { transform }),
      resyncPeriod: opts.resyncPeriod ?? this.#opts.resyncPeriod ?? 0,
    });
    this.#informers.set(id, { informer: inf as unknown as Informer<KubeObject>, started: false });
    return inf;
  }

  /** Pods. @param opts selectors and options. @returns the shared pod informer. */
  pods(opts?: InformerForOptions<V1Pod>): Informer<V1Pod> {
    return this.informerFor<V1Pod>('v1/pods', opts);
  }

  /** ConfigMaps. @param opts selectors and options. @returns the shared informer. */
  configMaps(opts?: InformerForOptions<V1ConfigMap>): Informer<V1ConfigMap> {
    return this.informerFor<V1ConfigMap>('v1/configmaps', opts);
  }

  /** Secrets. @param opts selectors and options. @returns the shared informer. */
  secrets(opts?: InformerForOptions<V1Secret>): Informer<V1Secret> {
    return this.informerFor<V1Secret>('v1/secrets', opts);
  }

  /** Services. @param opts selectors and options. @returns the shared informer. */
  services(opts?: InformerForOptions<V1Service>): Informer<V1Service> {
    return this.informerFor<V1Service>('v1/services', opts);
  }

  /** Namespaces (cluster-scoped). @param opts selectors and options. @returns the shared informer. */
  namespaces(opts?: InformerForOptions<V1Namespace>): Informer<V1Namespace> {
    return this.informerFor<V1Namespace>({ version: 'v1', plural: 'namespaces', namespaced: false }, opts);
  }

  /** Nodes (cluster-scoped). @param opts selectors and options. @returns the shared informer. */
  nodes(opts?: InformerForOptions<V1Node>): Informer<V1Node> {
    return this.informerFor<V1Node>({ version: 'v1', plural: 'nodes', namespaced: false }, opts);
  }

  /** Deployments. @param opts selectors and options. @returns the shared informer. */
  deployments(opts?: InformerForOptions<V1Deployment>): Informer<V1Deployment> {
    return this.informerFor<V1Deployment>('apps/v1/deployments', opts);
  }

  /** ReplicaSets. @param opts selectors and options. @returns the shared informer. */
  replicaSets(opts?: InformerForOptions<V1ReplicaSet>): Informer<V1ReplicaSet> {
    return this.informerFor<V1ReplicaSet>('apps/v1/replicasets', opts);
  }

  /** StatefulSets. @param opts selectors and options. @returns the shared informer. */
  statefulSets(opts?: InformerForOptions<V1StatefulSet>): Informer<V1StatefulSet> {
    return this.informerFor<V1StatefulSet>('apps/v1/statefulsets', opts);
  }

  /** DaemonSets. @param opts selectors and options. @returns the shared informer. */
  daemonSets(opts?: InformerForOptions<V1DaemonSet>): Informer<V1DaemonSet> {
    return this.informerFor<V1DaemonSet>('apps/v1/daemonsets', opts);
  }

  /** Jobs. @param opts selectors and options. @returns the shared informer. */
  jobs(opts?: InformerForOptions<V1Job>): Informer<V1Job> {
    return this.informerFor<V1Job>('batch/v1/jobs', opts);
  }

  /** Leases. @param opts selectors and options. @returns the shared informer. */
  leases(opts?: InformerForOptions<V1Lease>): Informer<V1Lease> {
    return this.informerFor<V1Lease>('coordination.k8s.io/v1/leases', opts);
  }

  /**
   * Starts every informer created and not yet started; call again after
   * asking for more. Does nothing after `shutdown()`.
   */
  start(): void {
    if (this.#shuttingDown) return;
    for (const entry of this.#informers.values()) {
      if (entry.started) continue;
      entry.started = true;
      entry.informer.start();
    }
  }

  /**
   * Waits until every started informer has synced.
   *
   * @param signal gives up when aborted.
   * @returns the ids of the informers that synced.
   * @throws CacheSyncError naming those that did not, when `signal` aborts or an informer stops first.
   */
  async waitForCacheSync(signal?: AbortSignal): Promise<readonly string[]> {
    const started = [...this.#informers].filter(([, e]) => e.started);
    const results = await Promise.allSettled(started.map(([, e]) => e.informer.whenSynced(signal)));
    const synced: string[] = [];
    const unsynced: string[] = [];
    let cause: unknown;
    results.forEach((r, i) => {
      const id = (started[i] as [string, Entry])[0];
      if (r.status === 'fulfilled') synced.push(id);
      else {
        unsynced.push(id);
        cause ??= r.reason;
      }
    });
    if (unsynced.length > 0) throw new CacheSyncError(synced, unsynced, cause);
    return synced;
  }

  /** Stops every informer and waits for them; later `start()` calls do nothing. Safe to call again. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    await Promise.all([...this.#informers.values()].map((e) => e.informer.stop()));
  }

  #identity(resource: ResourceRef, namespace: string | undefined, labelSelector: string | undefined, fieldSelector: string | undefined, transform: unknown): string {
    const res = typeof resource === 'string' ? resource : [resource.group, resource.version, resource.plural].filter(Boolean).join('/');
    let id = res;
    if (namespace !== undefined && namespace !== '') id += ` in ${namespace}`;
    if (labelSelector) id += ` labels(${labelSelector})`;
    if (fieldSelector) id += ` fields(${fieldSelector})`;
    if (typeof transform === 'function') {
      let n = this.#transformIds.get(transform);
      if (n === undefined) {
        n = this.#nextTransformId++;
        this.#transformIds.set(transform, n);
      }
      id += ` transform#${n}`;
    }
    return id;
  }
}
