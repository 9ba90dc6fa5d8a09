/**
 * What the e2e specs share: a cache fed by rxkube from a real API server, the server's own view
 * from a fresh LIST made with client-node's API clients, and a wait for the two to agree.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { informer, type Informer, type InformerOptions, type InformerStatus } from '../../src/informer/informer.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { reflect } from '../../src/reflector/index.js';
import type { ReflectOptions, ReflectorEvent, ReflectorStatus } from '../../src/reflector/types.js';
import { objectClient } from '../../src/client/objectClient.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher, ResourceRef } from '../../src/sources/types.js';
import type { CustomResourceRef } from '../../src/sources/resources.js';
import type { KubeObject } from '../../src/store/types.js';
import { waitFor } from '../helpers/waitFor.js';

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function keyOf(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** The part of an object the comparison looks at: identity and version. */
export interface Fingerprint {
  readonly uid: string | undefined;
  readonly resourceVersion: string | undefined;
}

export function fingerprints(objs: Iterable<KubeObject>): Map<string, Fingerprint> {
  const out = new Map<string, Fingerprint>();
  for (const o of objs) out.set(keyOf(o), { uid: o.metadata?.uid, resourceVersion: o.metadata?.resourceVersion });
  return out;
}

/** A cache of one resource kept by rxkube, with everything it reported along the way. */
export interface Mirror<T extends KubeObject> {
  /** The objects, by key, as rxkube currently has them. */
  readonly objects: ReadonlyMap<string, T>;
  /** Every reflector event, in order. */
  readonly events: readonly ReflectorEvent<T>[];
  /** Every status report, in order. */
  readonly statuses: readonly ReflectorStatus[];
  /** Every key the cache ever held. */
  readonly everSeen: ReadonlySet<string>;
  /** The error reflect() ended with, if it did (it should not). */
  readonly failure: unknown;
  /** Resolves once the first Replace has been applied. */
  whenSynced(timeoutMs?: number): Promise<void>;
  stop(): void;
}

/**
 * Runs `reflect(kubeSource(kc, resource, sourceOpts), reflectOpts)` and folds its events into a Map
 * the way a store would: Replace swaps the whole content, Added/Modified set, Deleted removes.
 */
export function mirror<T extends KubeObject>(
  kc: KubeConfig,
  resource: ResourceRef,
  sourceOpts: Parameters<typeof kubeSource>[2] = {},
  reflectOpts: ReflectOptions = {},
): Mirror<T> {
  const source = kubeSource<T>(kc, resource as CustomResourceRef, sourceOpts);
  return mirrorOf(source, reflectOpts);
}

export function mirrorOf<T extends KubeObject>(source: ListerWatcher<T>, reflectOpts: ReflectOptions = {}): Mirror<T> {
  const objects = new Map<string, T>();
  const events: ReflectorEvent<T>[] = [];
  const statuses: ReflectorStatus[] = [];
  const everSeen = new Set<string>();
  let synced = false;
  let failure: unknown;
  const userStatus = reflectOpts.status;
  const sub: Subscription = reflect(source, {
    ...reflectOpts,
    status: (s: ReflectorStatus) => {
      statuses.push(s);
      if (typeof userStatus === 'function') userStatus(s);
      else userStatus?.next?.(s);
    },
  }).subscribe({
    next: (e) => {
      events.push(e);
      switch (e.type) {
        case 'Replace':
          objects.clear();
          for (const o of e.items) objects.set(keyOf(o), o);
          synced = true;
          break;
        case 'Added':
        case 'Modified':
          objects.set(keyOf(e.obj), e.obj);
          break;
        case 'Deleted':
          objects.delete(keyOf(e.obj));
          break;
        default:
          break;
      }
      for (const k of objects.keys()) everSeen.add(k);
    },
    error: (e: unknown) => {
      failure = e ?? new Error('reflect() errored with nothing');
    },
    complete: () => {
      failure = new Error('reflect() completed, which it must never do on its own');
    },
  });
  return {
    objects,
    events,
    statuses,
    everSeen,
    get failure() {
      return failure;
    },
    whenSynced: async (timeoutMs = 60_000) => {
      const listed = (): boolean => {
        if (failure !== undefined) throw failure;
        return synced;
      };
      await waitFor(listed, 'the first list', timeoutMs, { everyMs: 50 });
    },
    stop: () => sub.unsubscribe(),
  };
}

/** An informer on a real server, with everything it reported along the way. */
export interface Informed<T extends KubeObject> {
  readonly informer: Informer<T>;
  /** Every event on `events$`, in order. */
  readonly events: readonly InformerEvent<T>[];
  /** Every distinct reflector status seen on `status$`, in order. */
  readonly statuses: readonly ReflectorStatus[];
  /** Every error on `errors$`. */
  readonly errors: readonly Error[];
  /** The informer's last status. */
  readonly status: InformerStatus | undefined;
  /** Keys that ever had an add. */
  readonly everSeen: ReadonlySet<string>;
  /** Resolves once synced; rejects after `timeoutMs` or when the informer stops first. */
  whenSynced(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `informer(kubeSource(kc, resource, sourceOpts), informerOpts)` and records what it says. */
export function informed<T extends KubeObject>(
  kc: KubeConfig,
  resource: ResourceRef,
  sourceOpts: Parameters<typeof kubeSource>[2] = {},
  informerOpts: InformerOptions<T> = {},
): Informed<T> {
  const inf = informer<T>(kubeSource<T>(kc, resource as CustomResourceRef, sourceOpts), informerOpts);
  const events: InformerEvent<T>[] = [];
  const statuses: ReflectorStatus[] = [];
  const errors: Error[] = [];
  const everSeen = new Set<string>();
  let status: InformerStatus | undefined;
  const subs = [
    inf.subscribe((e) => {
      events.push(e);
      if (e.type === 'add') everSeen.add(keyOf(e.obj));
    }),
    inf.status$.subscribe((s) => {
      status = s;
      if (s.reflector !== undefined && s.reflector !== statuses.at(-1)) statuses.push(s.reflector);
    }),
    inf.errors$.subscribe((e) => errors.push(e)),
  ];
  return {
    informer: inf,
    events,
    statuses,
    errors,
    get status() {
      return status;
    },
    everSeen,
    whenSynced: (timeoutMs = 60_000) => inf.whenSynced({ timeout: timeoutMs }),
    // The event subscription is the informer's only subscriber: unsubscribing it ends the watch.
    stop: async () => {
      for (const sub of subs) sub.unsubscribe();
    },
  };
}

/** A readable diff of two fingerprint maps; empty when they agree. */
export function diff(have: ReadonlyMap<string, Fingerprint>, want: ReadonlyMap<string, Fingerprint>): string {
  const out: string[] = [];
  for (const [k, w] of want) {
    const h = have.get(k);
    if (h === undefined) out.push(`missing ${k}@${w.resourceVersion}`);
    else if (h.uid !== w.uid || h.resourceVersion !== w.resourceVersion) out.push(`stale ${k}: have ${h.uid}@${h.resourceVersion}, server ${w.uid}@${w.resourceVersion}`);
  }
  for (const k of have.keys()) if (!want.has(k)) out.push(`ghost ${k}`);
  return out.join('; ');
}

/**
 * Waits until the cache holds exactly what a fresh LIST returns: the same keys, UIDs and
 * resourceVersions. `list` is made with client-node's own API clients, not with rxkube.
 */
export async function converges(
  cache: () => Iterable<KubeObject>,
  list: () => Promise<readonly KubeObject[]>,
  timeoutMs = 60_000,
): Promise<Map<string, Fingerprint>> {
  let last = '';
  let server = new Map<string, Fingerprint>();
  await waitFor(async () => {
    server = fingerprints(await list());
    last = diff(fingerprints(cache()), server);
    return last === '';
  }, 'the cache to equal a fresh LIST', timeoutMs, { everyMs: 50, describe: () => last });
  return server;
}

/** Runs `fn` over `items` with at most `width` in flight, so a burst of writes does not swamp a 2-core machine. */
export async function inBatches<A>(items: readonly A[], width: number, fn: (a: A) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

/** `n` names with a prefix: `p-0`, `p-1`… */
export function names(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

/**
 * Creates the ServiceAccounts `prometheus` and `stranger` in `namespace` and binds only `prometheus` to the deploy's
 * `website-operator-metrics-reader` ClusterRole, as a cluster's Prometheus is bound to scrape secure metrics.
 */
export async function bindMetricsScraper(admin: KubeConfig, namespace: string): Promise<void> {
  for (const name of ['prometheus', 'stranger']) await objectClient(admin, 'v1/serviceaccounts', { namespace }).create({ metadata: { name } });
  await objectClient(admin, 'rbac.authorization.k8s.io/v1/clusterrolebindings', { fieldManager: 'e2e' }).apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-website-operator-metrics' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'website-operator-metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace }],
    },
    { force: true },
  );
}
