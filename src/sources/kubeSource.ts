import type { KubeConfig } from '@kubernetes/client-node';
import type { AsyncIterableX } from 'ix/asynciterable';
import { getBody, plainHttpAllowed, type Progress } from './http.js';
import type { ListEnvelope } from './listDecoder.js';
import { DecodedListResponse } from './listResponse.js';
import { parseLabelSelector } from '../store/labelSelector.js';
import { parseFieldSelector } from '../store/fieldSelector.js';
import type { KubeObject } from '../store/types.js';
import { parseResourceRef, resourcePath, type ParsedResource } from './resourceRef.js';
import { builtInScope, type BuiltInResource, type BuiltInResources, type CustomResourceRef, type TypedResource } from './resources.js';
import { clusterOf } from './identity.js';
import type { ListerWatcher, ListOptions, ListResponse, ObjectList, PartialObjectMetadata, ResourceRef, SourceIdentity, WatchBatch, WatchEvent, WatchOptions } from './types.js';
import { HttpListItemStream, HttpWatchBatches, HttpWatchStream, type WatchBody } from './httpStreams.js';
import { wireLimitsOf, type WireLimitOptions } from './wireLimits.js';
import { MAX_TIMER_MS } from '../options/timerDelay.js';
import { notServedExplainer, type NotServedExplainer } from './notServed.js';
import { describeValue } from '../options/validate.js';

/** Options of {@link kubeSource}. */
export interface KubeSourceOptions extends WireLimitOptions {
  /**
   * Only objects of this namespace. Omit for every namespace (and for
   * cluster-scoped resources).
   * @default undefined (all namespaces)
   */
  readonly namespace?: string;
  /**
   * Label selector applied to every list and watch (`app=web,tier!=db`).
   * @default undefined (no filter)
   */
  readonly labelSelector?: string;
  /**
   * Field selector applied to every list and watch (`status.phase=Running`).
   * @default undefined (no filter)
   */
  readonly fieldSelector?: string;
  /**
   * Page size used when a list request does not say (`limit` unset). A
   * request's `limit: 0` asks for everything in one response.
   * @default 500
   */
  readonly pageSize?: number;
  /**
   * A list that receives no byte, or a watch that receives no complete
   * event, for this long ends with a `ConnectionError` code `IDLE_TIMEOUT`
   * (time the consumer spends holding what it was given does not count).
   * API servers send watch bookmarks about once a minute, so a healthy quiet
   * watch never trips it; a watch that trickles bytes without ever
   * completing an event does (HI-27).
   * @default 120_000
   */
  readonly idleTimeoutMs?: number;
  /**
   * The most bytes one watch line or one list item may take (a watch event
   * wraps one object). Past it the response is dropped and the request fails
   * with a `DecodeError` of code `OBJECT_TOO_LARGE`, retried with backoff;
   * what was read of the object is not kept. An object is at most 1.5 MiB in
   * etcd and at most 3 MiB of JSON when written, so the default leaves five
   * times the room (HI-23). At most 256 MiB.
   * @default 16_777_216 (16 MiB)
   */
  readonly maxObjectBytes?: number;
  /**
   * The most bytes (inflated) one list response may take. Past it the
   * response is dropped and the list fails with a `DecodeError` of code
   * `LIST_TOO_LARGE`, retried with backoff. The items received until then are
   * held as any list's are; the bound stops a list that never ends. An
   * unpaged list of 150,000 pods is about 1 GiB (HI-24).
   * @default 2_147_483_648 (2 GiB)
   */
  readonly maxListBytes?: number;
  /**
   * A list may wait for the server this long, plus `listTimeoutPerMiBMs`
   * for every MiB it received; past that it fails with a `ConnectionError`
   * code `TIMEOUT`, retried with backoff. A list that trickles is caught here
   * while every byte keeps its idle timer from firing (HI-26).
   * kube-apiserver answers any list within its own 60 s.
   * @default 120_000
   */
  readonly listTimeoutMs?: number;
  /**
   * What each MiB received adds to `listTimeoutMs`: a list must come at
   * 1 MiB/s on average past its first two minutes, so a 1 GiB list on a slow
   * link has 17 more minutes, and a list at one byte a second has none (HI-26).
   * @default 1_000
   */
  readonly listTimeoutPerMiBMs?: number;
  /**
   * Whether this source offers streaming lists (`sendInitialEvents`). Turn
   * off for API servers older than 1.27 or with the WatchList feature off.
   * @default true
   */
  readonly watchList?: boolean;
  /**
   * List and watch only the objects' metadata (`PartialObjectMetadata`), as
   * client-go's metadata informers do: the server drops spec and status, so
   * a cache of pods holds a fraction of the memory. Enough for controllers
   * that act on labels, owners, finalizers or existence. A server that
   * cannot serve it answers with whole objects, which still work.
   * @default false
   */
  readonly metadataOnly?: boolean;
}

/** Content negotiation of metadata-only requests: the reduced form first, whole objects as the fallback. */
const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** A {@link ListerWatcher} over HTTP, with a streaming view of list bodies. */
export interface KubeSource<T> extends ListerWatcher<T> {
  /** The resource this source reads. */
  readonly resource: ParsedResource;
  readonly supportsWatchList: boolean;
  /** The cluster (the kubeconfig's server URL), the resource, and the namespace and selectors given. */
  readonly identity: SourceIdentity;
  /**
   * Streams the items of one LIST response without collecting them, for
   * lists too large to hold (a body larger than 512 MiB decodes fine).
   * Each iteration makes its own request; `envelope` (resourceVersion,
   * continue token) is set once an iteration has read the whole body.
   */
  listItems(opts: ListOptions, signal: AbortSignal): AsyncIterableX<T> & { readonly envelope: ListEnvelope | undefined };
  /** The events of one WATCH request a chunk of the response at a time (see {@link ListerWatcher.watchBatches}). */
  watchBatches(opts: WatchOptions, signal: AbortSignal): AsyncIterableX<WatchBatch<T>>;
  /** One LIST request read in two steps, its metadata first (see {@link ListerWatcher.listResponse}). */
  listResponse(opts: ListOptions, signal: AbortSignal): ListResponse<T>;
}

/**
 * Creates a {@link ListerWatcher} that lists and watches one Kubernetes
 * resource over HTTP: core (`v1/pods`), grouped (`apps/v1/deployments`) or
 * custom (`example.com/v1/widgets`), namespaced or cluster-wide, with label
 * and field selectors applied to both list and watch.
 *
 * Authentication, TLS and proxies come from `kc` (client-node), so bearer
 * tokens, client certificates, exec and OIDC plugins and custom CAs all work;
 * no credential ever appears in an error message.
 *
 * `list` returns one page and decodes the body incrementally, never holding
 * it as one string. `watch` yields decoded events, one `JSON.parse` per line,
 * requests bookmarks unless `allowWatchBookmarks: false`, turns an ERROR event
 * into its typed error, throws a `DecodeError` for a line it cannot trust,
 * and ends with `ConnectionError` code `IDLE_TIMEOUT` when the connection goes
 * silent. A list answered 404 asks discovery why, once per failure streak,
 * and fails with a `ResourceNotServedError` naming the group/version the
 * server lacks or the served resource name that was meant (CR-130). Aborting the signal ends either request at once and releases its
 * socket. Both are lazy: nothing is sent until the promise is created or the
 * iterable is iterated.
 *
 * Connections: every list, watch and write of the process to one cluster
 * with the same TLS material shares one connection pool (one HTTP/2
 * connection where the server offers it), which closes as soon as its last
 * request ended. Credentials (tokens, exec and OIDC plugins) are applied to
 * every request; certificate, key and CA files are read for every request
 * too, and a rotated one moves the next request to a new pool. How the
 * transport behaves (HTTP/2, compression, its liveness check) comes with
 * `kc`: see `withTransport`.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { kubeSource } from 'rxkube';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const pods = kubeSource(kc, 'v1/pods', { namespace: 'default', labelSelector: 'app=web' }); // a KubeSource<V1Pod>
 * const ac = new AbortController();
 * const page = await pods.list({ resourceVersion: '0' }, ac.signal);
 * for await (const ev of pods.watch({ resourceVersion: page.metadata.resourceVersion, timeoutSeconds: 300 }, ac.signal)) {
 *   console.log(ev.type, ev.object.metadata?.name);
 * }
 * ```
 *
 * @param kc The kubeconfig; its current context chooses cluster and user.
 * Built-in resources are named `'v1/pods'`, `'apps/v1/deployments'`, … and
 * the source's object type follows from the name (see `BuiltInResources`).
 * A custom resource defined with `customResource` gives its own type
 * (`kubeSource(kc, Website)` is a `KubeSource<Website>`); named otherwise it takes its type argument:
 * `kubeSource<Widget>(kc, 'example.com/v1/widgets')`. With `metadataOnly: true`
 * it is a source of `PartialObjectMetadata` for any resource. Mistakes that need no
 * server to find — a malformed resource, label or field selector, a server
 * URL that is not one, a namespace on a cluster-scoped resource — throw a
 * TypeError or `SelectorParseError` here, before any request.
 *
 * @param resource Which resource: `'v1/pods'`, `'apps/v1/deployments'`, `'example.com/v1/widgets'` or `{ group, version, plural }`.
 * @param opts Namespace, selectors, page size, idle timeout.
 * @returns The source.
 */
export function kubeSource(kc: KubeConfig, resource: BuiltInResource | CustomResourceRef, opts: KubeSourceOptions & { readonly metadataOnly: true }): KubeSource<PartialObjectMetadata>;
export function kubeSource<R extends BuiltInResource>(kc: KubeConfig, resource: R, opts?: KubeSourceOptions): KubeSource<BuiltInResources[R]>;
export function kubeSource<T extends KubeObject>(kc: KubeConfig, resource: TypedResource<T>, opts?: KubeSourceOptions): KubeSource<T>;
export function kubeSource<T extends KubeObject = KubeObject>(kc: KubeConfig, resource: CustomResourceRef, opts?: KubeSourceOptions): KubeSource<T>;
export function kubeSource<T>(kc: KubeConfig, resource: ResourceRef, opts: KubeSourceOptions = {}): KubeSource<T> {
  if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') throw new TypeError(`kc: expected a KubeConfig, got ${describeValue(kc)}`);
  if (opts === null || typeof opts !== 'object') throw new TypeError(`opts: expected an object, got ${describeValue(opts)}`);
  const ref = parseResourceRef(resource);
  const parsed: ParsedResource = ref.namespaced === undefined ? { ...ref, namespaced: builtInScope(ref.name) } : ref;
  const namespace = optionalString(opts, 'namespace');
  const labelSelector = optionalString(opts, 'labelSelector');
  const fieldSelector = optionalString(opts, 'fieldSelector');
  const pageSize = opts.pageSize ?? 500;
  if (!Number.isSafeInteger(pageSize) || pageSize < 0) {
    throw new TypeError(`pageSize: expected a non-negative integer, got ${describeValue(opts.pageSize)}`);
  }
  const idleTimeoutMs = opts.idleTimeoutMs ?? 120_000;
  // A Node timer longer than 2^31 - 1 ms fires after 1 ms.
  if (!Number.isSafeInteger(idleTimeoutMs) || idleTimeoutMs <= 0 || idleTimeoutMs > MAX_TIMER_MS) {
    throw new TypeError(`idleTimeoutMs: expected a positive integer up to ${MAX_TIMER_MS}, got ${describeValue(opts.idleTimeoutMs)}`);
  }
  if (opts.watchList !== undefined && typeof opts.watchList !== 'boolean') {
    throw new TypeError(`watchList: expected a boolean, got ${describeValue(opts.watchList)}`);
  }
  if (opts.metadataOnly !== undefined && typeof opts.metadataOnly !== 'boolean') {
    throw new TypeError(`metadataOnly: expected a boolean, got ${describeValue(opts.metadataOnly)}`);
  }
  const metadataOnly = opts.metadataOnly ?? false;
  const limits = wireLimitsOf(opts);
  const listBounds = { maxBytes: limits.maxListBytes, timeoutMs: limits.listTimeoutMs, timeoutPerMiBMs: limits.listTimeoutPerMiBMs };
  const maxObjectBytes = limits.maxObjectBytes;
  if (namespace !== undefined && parsed.namespaced === false) {
    throw new TypeError(`namespace: ${parsed.name} is cluster-scoped, got namespace ${JSON.stringify(namespace)}`);
  }
  // Selectors the server would reject are named now, with the position of the mistake, not after a request.
  if (labelSelector !== undefined) parseLabelSelector(labelSelector);
  if (fieldSelector !== undefined) parseFieldSelector(fieldSelector);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new TypeError('kc: the kubeconfig has no current cluster (set a current-context)');
  const server = checkServer(cluster.server, cluster.name);
  const auth = plainHttpAllowed(kc);
  const path = resourcePath(parsed, namespace);

  const url = (params: URLSearchParams): string => {
    if (labelSelector !== undefined && labelSelector !== '') params.set('labelSelector', labelSelector);
    if (fieldSelector !== undefined && fieldSelector !== '') params.set('fieldSelector', fieldSelector);
    return `${server}${path}?${params.toString()}`;
  };

  const listUrl = (o: ListOptions): string => {
    checkListOptions(o);
    const params = new URLSearchParams();
    const limit = o.limit ?? pageSize;
    if (limit > 0) params.set('limit', String(limit));
    if (o.continue !== undefined && o.continue !== '') params.set('continue', o.continue);
    if (o.resourceVersion !== undefined && o.resourceVersion !== '') params.set('resourceVersion', o.resourceVersion);
    if (o.resourceVersionMatch !== undefined) params.set('resourceVersionMatch', o.resourceVersionMatch);
    return url(params);
  };

  // A list's 404 is told apart from a resource the server does not serve, by asking discovery (CR-130).
  const notServed = notServedExplainer(auth, server, parsed);
  const listBody = (target: string, signal: AbortSignal): AsyncGenerator<Buffer, void, undefined> => {
    const what = `list ${parsed.name}`;
    const accept = metadataOnly ? METADATA_LIST_ACCEPT : undefined;
    return explained(getBody(auth, target, what, signal, { idleTimeoutMs, accept, list: listBounds }), notServed, what, signal);
  };

  const listItems = (o: ListOptions, signal: AbortSignal): HttpListItemStream<T> => {
    const target = listUrl(o);
    const decoder = { stripManagedFields: o.stripManagedFields === true, maxObjectBytes };
    return new HttpListItemStream<T>(() => listBody(target, signal), decoder);
  };

  /** Checks the options now; each call of the returned function makes the WATCH request anew. */
  const watchBody = (o: WatchOptions, signal: AbortSignal): (() => WatchBody) => {
    checkWatchOptions(o);
    const params = new URLSearchParams();
    params.set('watch', 'true');
    if (o.allowWatchBookmarks ?? true) params.set('allowWatchBookmarks', 'true');
    if (o.resourceVersion !== undefined && o.resourceVersion !== '') params.set('resourceVersion', o.resourceVersion);
    if (o.resourceVersionMatch !== undefined) params.set('resourceVersionMatch', o.resourceVersionMatch);
    if (o.timeoutSeconds !== undefined) params.set('timeoutSeconds', String(o.timeoutSeconds));
    if (o.sendInitialEvents !== undefined) params.set('sendInitialEvents', String(o.sendInitialEvents));
    const target = url(params);
    const accept = metadataOnly ? METADATA_WATCH_ACCEPT : undefined;
    return () => {
      const progress: Progress = { made: false };
      const what = `watch ${parsed.name}`;
      const chunks = getBody(auth, target, what, signal, { idleTimeoutMs, accept, progress });
      // A streaming list is the list of its informer: its 404 is explained too (CR-130).
      return { chunks: o.sendInitialEvents === true ? explained(chunks, notServed, what, signal) : chunks, progress, maxObjectBytes, cached: o.cached };
    };
  };

  const identity: SourceIdentity = Object.freeze({
    cluster: clusterOf(server),
    group: parsed.group,
    version: parsed.version,
    plural: parsed.plural,
    ...(namespace !== undefined && namespace !== '' && { namespace }),
    ...(labelSelector !== undefined && labelSelector !== '' && { labelSelector }),
    ...(fieldSelector !== undefined && fieldSelector !== '' && { fieldSelector }),
  });

  const source = {
    resource: parsed,
    supportsWatchList: opts.watchList ?? true,
    identity,
    listItems,
    // The pager's view: the continue token is read from a page's first bytes, so the next page can be asked for early (P-1).
    listResponse(o: ListOptions, signal: AbortSignal): ListResponse<T> {
      const target = listUrl(o);
      const decoder = { stripManagedFields: o.stripManagedFields === true, maxObjectBytes };
      return new DecodedListResponse<T>((s) => listBody(target, s), signal, decoder);
    },
    async list(o: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
      const stream = listItems(o, signal);
      const items: T[] = [];
      for await (const item of stream) items.push(item);
      const envelope = stream.envelope as ListEnvelope;
      return { ...envelope, items };
    },
    watch(o: WatchOptions, signal: AbortSignal): AsyncIterableX<WatchEvent<T>> {
      return new HttpWatchStream<T>(watchBody(o, signal), o.stripManagedFields === true);
    },
    watchBatches(o: WatchOptions, signal: AbortSignal): AsyncIterableX<WatchBatch<T>> {
      return new HttpWatchBatches<T>(watchBody(o, signal), o.stripManagedFields === true);
    },
  };
  return source;
}

/**
 * The chunks of a list's answer, its failure explained (CR-130): the first
 * chunk ends the explainer's failure streak, a 404 asks it why.
 */
async function* explained(body: AsyncGenerator<Buffer, void, undefined>, notServed: NotServedExplainer, what: string, signal: AbortSignal): AsyncGenerator<Buffer, void, undefined> {
  let answered = false;
  try {
    for await (const chunk of body) {
      if (!answered) {
        answered = true;
        notServed.served();
      }
      yield chunk;
    }
  } catch (err) {
    if (answered) throw err;
    throw await notServed.explain(err, what, signal);
  }
}

/** The cluster's server URL, checked: an http(s) URL without query or fragment; trailing slashes dropped. */
function checkServer(server: unknown, clusterName: string): string {
  let url: URL;
  try {
    url = new URL(String(server));
  } catch {
    throw new TypeError(`kc: cluster ${JSON.stringify(clusterName)} has server ${JSON.stringify(server)}, which is not a URL (expected e.g. https://127.0.0.1:6443)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`kc: cluster ${JSON.stringify(clusterName)} has server ${JSON.stringify(server)}: expected an https: or http: URL`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new TypeError(`kc: cluster ${JSON.stringify(clusterName)} has a server URL with a query, fragment or credentials; expected scheme://host[:port][/path]`);
  }
  return String(server).replace(/\/+$/, '');
}

function optionalString(opts: KubeSourceOptions, key: 'namespace' | 'labelSelector' | 'fieldSelector'): string | undefined {
  const value = opts[key];
  if (value !== undefined && typeof value !== 'string') {
    throw new TypeError(`${key}: expected a string, got ${describeValue(value)}`);
  }
  return value;
}

function checkListOptions(o: ListOptions): void {
  if (o.limit !== undefined && (!Number.isSafeInteger(o.limit) || o.limit < 0)) {
    throw new TypeError(`limit: expected a non-negative integer, got ${describeValue(o.limit)}`);
  }
  checkMatch(o.resourceVersionMatch);
}

function checkWatchOptions(o: WatchOptions): void {
  if (o.timeoutSeconds !== undefined && (!Number.isSafeInteger(o.timeoutSeconds) || o.timeoutSeconds <= 0)) {
    throw new TypeError(`timeoutSeconds: expected a positive integer, got ${describeValue(o.timeoutSeconds)}`);
  }
  checkMatch(o.resourceVersionMatch);
}

function checkMatch(match: string | undefined): void {
  if (match !== undefined && match !== 'NotOlderThan' && match !== 'Exact') {
    throw new TypeError(`resourceVersionMatch: expected 'NotOlderThan' or 'Exact', got ${describeValue(match)}`);
  }
}
