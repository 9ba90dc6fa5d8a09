import type { KubeConfig } from '@kubernetes/client-node';
import { kubeSource } from '../sources/kubeSource.js';
import type { BuiltInResource, BuiltInResources, CustomResourceRef, TypedResource } from '../sources/resources.js';
import type { ListerWatcher, PartialObjectMetadata, ResourceRef } from '../sources/types.js';
import { IndexConflictError } from '../store/errors/IndexConflictError.js';
import type { Indexers, KubeObject } from '../store/types.js';
import { CacheSyncError } from './CacheSyncError.js';
import { checkInformerOptionValues } from './informerOptions.js';
import { informer, type Informer, type InformerOptions, type WhenSyncedOptions } from './informer.js';
import { describeValue } from '../options/validate.js';

/** Options of one informer asked of a factory; those that name the list/watch are part of its identity. */
export interface InformerForOptions<T> extends InformerOptions<T> {
  /** Namespace to watch; omit for all namespaces. @default the factory's namespace */
  readonly namespace?: string;
  /** Server-side label selector. @default none */
  readonly labelSelector?: string;
  /** Server-side field selector. @default none */
  readonly fieldSelector?: string;
  /** Cache `PartialObjectMetadata` only (see `kubeSource`'s `metadataOnly`); a separate informer from the full one. @default false */
  readonly metadataOnly?: boolean;
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
  readonly sourceFor?: (kc: KubeConfig, resource: ResourceRef, opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; metadataOnly?: boolean }) => ListerWatcher<KubeObject>;
}

/** Adds to a shared informer the indexes a later user asks for; the same function under the same name is not a conflict. */
function shareIndexers<T>(inf: Informer<T>, indexers: Indexers<T> | undefined): void {
  if (indexers === undefined) return;
  const existing = inf.store.getIndexers();
  const missing: Record<string, Indexers<T>[string]> = {};
  const conflicts: string[] = [];
  for (const [name, fn] of Object.entries(indexers)) {
    const have = existing[name];
    if (have === undefined) missing[name] = fn;
    else if (have !== fn) conflicts.push(name);
  }
  if (conflicts.length > 0) throw new IndexConflictError(conflicts);
  if (Object.keys(missing).length > 0) inf.store.addIndexers(missing);
}

/**
 * Hands out one shared informer per (resource, namespace, selectors,
 * transform), so every part of a controller that watches pods shares one
 * cache and one watch. The factory holds no lifetime of its own: each
 * informer runs while something subscribes to it (a subscriber, a handler
 * registration, a controller), and `whenSynced` waits for those running.
 *
 * ## Example
 * ```ts
 * import { InformerFactory } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const factory = new InformerFactory(kc, { namespace: 'default' });
 * const pods = factory.informerFor('v1/pods'); // Informer<V1Pod>
 * const widgets = factory.informerFor('example.com/v1/widgets');
 * const running = [pods.addHandler({}), widgets.addHandler({})];
 * await factory.whenSynced({ timeout: 30_000 });
 * console.log(pods.store.size, widgets.store.size);
 * for (const r of running) r.unsubscribe();
 * ```
 */
export class InformerFactory {
  readonly #kc: KubeConfig;
  readonly #opts: InformerFactoryOptions;
  // Informers by identity.
  readonly #informers = new Map<string, Informer<KubeObject>>();
  // Functions have no printable identity; number each transform to key informers by it.
  readonly #transformIds = new WeakMap<object, number>();
  #nextTransformId = 1;

  /**
   * @param kc where the API server is and how to authenticate.
   * @param opts factory-wide defaults.
   */
  constructor(kc: KubeConfig, opts: InformerFactoryOptions = {}) {
    if (kc === null || typeof kc !== 'object') throw new TypeError(`kc must be a KubeConfig, got ${describeValue(kc)}`);
    if (opts.resyncPeriod !== undefined && (!Number.isFinite(opts.resyncPeriod) || opts.resyncPeriod < 0)) {
      throw new TypeError(`resyncPeriod must be a non-negative number of ms, got ${describeValue(opts.resyncPeriod)}`);
    }
    this.#kc = kc;
    this.#opts = opts;
  }

  /**
   * The shared informer for a resource, created on first request.
   *
   * ## Example
   * ```ts
   * import { InformerFactory, type KubeObject } from 'rxkube';
   * import type { KubeConfig } from '@kubernetes/client-node';
   * declare const kc: KubeConfig;
   * interface Widget extends KubeObject { spec?: { size?: number } }
   *
   * const factory = new InformerFactory(kc);
   * const pods = factory.informerFor('v1/pods'); // Informer<V1Pod>
   * const widgets = factory.informerFor<Widget>('example.com/v1/widgets', { labelSelector: 'team=a' });
   * ```
   *
   * @param resource `'v1/pods'`, `'apps/v1/deployments'`, `'example.com/v1/widgets'`, the object form, or a
   *   `customResource` definition (the informer then has its type with no type argument).
   * @param opts selectors and informer options; the first request's options win for the informer's behaviour,
   *   except `indexers`, which a later request adds to the shared informer.
   * @returns the shared informer, idle until subscribed.
   */
  informerFor(resource: BuiltInResource | CustomResourceRef, opts: InformerForOptions<PartialObjectMetadata> & { readonly metadataOnly: true }): Informer<PartialObjectMetadata>;
  informerFor<R extends BuiltInResource>(resource: R, opts?: InformerForOptions<BuiltInResources[R]>): Informer<BuiltInResources[R]>;
  informerFor<T extends KubeObject>(resource: TypedResource<T>, opts?: InformerForOptions<T>): Informer<T>;
  informerFor<T extends KubeObject = KubeObject>(resource: CustomResourceRef, opts?: InformerForOptions<T>): Informer<T>;
  informerFor<T extends KubeObject>(resource: ResourceRef, opts: InformerForOptions<T> = {}): Informer<T> {
    // Before the lookup: a bad option must throw even when an informer of this identity exists already (PF-1).
    checkInformerOptionValues(opts);
    const namespace = opts.namespace ?? this.#opts.namespace;
    const transform = opts.transform ?? (this.#opts.transform as ((obj: T) => T) | undefined);
    // An ordered informer delivers differently, so it is not shared with a per-key one (PF-17).
    const id =
      this.#identity(resource, namespace, opts.labelSelector, opts.fieldSelector, transform) + (opts.metadataOnly === true ? ' metadata-only' : '') + (opts.fifo === 'ordered' ? ' ordered' : '');
    const existing = this.#informers.get(id);
    if (existing !== undefined) {
      const shared = existing as unknown as Informer<T>;
      shareIndexers(shared, opts.indexers);
      return shared;
    }
    const sourceOpts = {
      ...(namespace !== undefined && { namespace }),
      ...(opts.labelSelector !== undefined && { labelSelector: opts.labelSelector }),
      ...(opts.fieldSelector !== undefined && { fieldSelector: opts.fieldSelector }),
      ...(opts.metadataOnly !== undefined && { metadataOnly: opts.metadataOnly }),
    };
    const source = (this.#opts.sourceFor ?? (kubeSource as (kc: KubeConfig, r: ResourceRef, o: object) => ListerWatcher<KubeObject>))(this.#kc, resource, sourceOpts) as ListerWatcher<T>;
    const inf = informer<T>(source, {
      ...opts,
      ...(transform !== undefined && { transform }),
      resyncPeriod: opts.resyncPeriod ?? this.#opts.resyncPeriod ?? 0,
      name: id,
    });
    this.#informers.set(id, inf as unknown as Informer<KubeObject>);
    return inf;
  }

  /**
   * Waits until every informer of the factory that is running (has a
   * subscriber) is synced: the factory's form of `Informer.whenSynced`, as
   * client-go's `WaitForCacheSync` waits for the started informers (SF-5).
   * An informer nobody subscribed to is not waited for; one that has failed,
   * even after it synced, makes it reject (LT-89).
   *
   * ## Example
   * ```ts
   * import { InformerFactory } from 'rxkube';
   * import type { KubeConfig } from '@kubernetes/client-node';
   * declare const kc: KubeConfig;
   *
   * const factory = new InformerFactory(kc);
   * const sub = factory.informerFor('v1/pods').subscribe((e) => console.log(e.type));
   * await factory.whenSynced({ timeout: 30_000 });
   * sub.unsubscribe();
   * ```
   *
   * @param opts `timeout` in ms and an abort `signal`; without either, waits as long as the informers keep trying.
   * @returns a promise that resolves once they are all synced.
   * @throws CacheSyncError naming those that synced and those that did not, with the first one's last error as `cause`.
   */
  async whenSynced(opts: WhenSyncedOptions = {}): Promise<void> {
    const running = [...this.#informers].filter(([, inf]) => inf.status().state !== 'idle');
    const results = await Promise.allSettled(running.map(([, inf]) => inf.whenSynced(opts)));
    const synced: string[] = [];
    const unsynced: string[] = [];
    let cause: unknown;
    let reason: CacheSyncError['reason'] = 'failed';
    results.forEach((r, i) => {
      const id = (running[i] as [string, Informer<KubeObject>])[0];
      if (r.status === 'fulfilled') synced.push(id);
      else {
        unsynced.push(id);
        if (cause === undefined) {
          cause = r.reason instanceof CacheSyncError && r.reason.cause !== undefined ? r.reason.cause : r.reason;
          if (r.reason instanceof CacheSyncError) reason = r.reason.reason;
        }
      }
    });
    if (unsynced.length > 0) throw new CacheSyncError(synced, unsynced, cause, reason);
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
