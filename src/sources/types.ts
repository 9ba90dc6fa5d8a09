import type { CachedLookup } from './cachedParts.js';
import type { KubeObject } from '../store/types.js';

/** A LIST response (one page, or the whole list when not paged). */
export interface ObjectList<T> {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string; readonly remainingItemCount?: number };
  readonly items: readonly T[];
}

/** A decoded watch event. ERROR events are turned into typed errors by the source and never surface here. */
export type WatchEvent<T> =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED'; readonly object: T }
  | { readonly type: 'BOOKMARK'; readonly object: KubeObject };

/** Options for one LIST request (client-go's ListOptions subset rxkube uses). */
export interface ListOptions {
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  readonly limit?: number;
  readonly continue?: string;
  /**
   * A decoding hint, never sent to the server: leave each object's `metadata.managedFields` out, without parsing
   * it. A source that cannot do this ignores it; `kubeSource` honours it (docs/semantics.md P-7).
   * @default false
   */
  readonly stripManagedFields?: boolean;
}

/** Options for one WATCH request. */
export interface WatchOptions {
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  readonly timeoutSeconds?: number;
  readonly allowWatchBookmarks?: boolean;
  readonly sendInitialEvents?: boolean;
  /**
   * A decoding hint, never sent to the server: leave each object's `metadata.managedFields` out, without parsing
   * it. A source that cannot do this ignores it; `kubeSource` honours it (docs/semantics.md P-7).
   * @default false
   */
  readonly stripManagedFields?: boolean;
  /**
   * A decoding hint, never sent to the server: the object the consumer's cache holds under a namespace and name,
   * deeply frozen. Each member of a MODIFIED event's object (after its metadata) whose bytes spell that object's
   * own member exactly is taken from it instead of parsed. A source that cannot do this ignores it; `kubeSource`
   * honours it (docs/semantics.md PF-50). The informer does not set it yet.
   * @default none
   */
  readonly cached?: CachedLookup;
}

/**
 * The events of one chunk of a watch response, read by index in order: an
 * array is one, and the HTTP source's batches parse each event only when
 * `at` reaches it, so the first event of a chunk is handled before the rest
 * are parsed. `at` may throw for an event that cannot be decoded; the events
 * before it were good.
 *
 * ## Example
 * ```ts
 * import type { WatchBatch, WatchEvent } from 'rxkube';
 * declare const batch: WatchBatch<{ metadata: { name: string } }>;
 *
 * for (let i = 0; i < batch.length; i++) {
 *   const event: WatchEvent<{ metadata: { name: string } }> | undefined = batch.at(i);
 *   if (event?.type === 'ADDED') console.log(event.object.metadata.name);
 * }
 * ```
 */
export interface WatchBatch<T> {
  /** How many events the chunk holds. */
  readonly length: number;
  /**
   * The event at `index`, from 0 to `length - 1`, read in order.
   *
   * @param index the position of the event in the chunk
   * @returns the event
   */
  at(index: number): WatchEvent<T> | undefined;
}

/**
 * Where facts about one resource come from. `list` returns one page; `watch`
 * streams events until the server ends the stream, the signal aborts, or an
 * error is thrown from the iterator (a typed error from `./errors`). Both are
 * lazy: nothing is requested before the call, and aborting `signal` ends the
 * request at once.
 */
export interface ListerWatcher<T> {
  /** One LIST request (one page when `limit` is set); aborting `signal` ends it. */
  list(opts: ListOptions, signal: AbortSignal): Promise<ObjectList<T>>;
  /** One WATCH request as an async iterable of events; it ends when the server ends the stream or `signal` aborts. */
  watch(opts: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<T>>;
  /**
   * The same WATCH request as `watch`, with its events handed over as they
   * arrived together: each step yields the (non-empty) events of one chunk
   * of the response, as an array or as a {@link WatchBatch} that decodes
   * each when it is read. It must yield exactly the events `watch` would,
   * in the same order, and end or throw the same way. When present, the
   * reflector reads watches through it, so events that arrived together
   * cost one asynchronous step instead of one each; `kubeSource` has it. A
   * source that wraps another should pass it on, or leave it out to be read
   * event by event.
   * @default undefined (the reflector reads `watch` one event at a time)
   */
  watchBatches?(opts: WatchOptions, signal: AbortSignal): AsyncIterable<WatchBatch<T>>;
  /**
   * The same LIST request as `list`, opened to be read in two steps: first
   * as far as the list's metadata, then to its end. It must give exactly
   * the page `list` would, and fail the same way. When present, the pager
   * reads a page's `continue` token from the first step and requests the
   * next page while this one is still decoded (P-1), so pages do not wait
   * for each other; `kubeSource` has it. A source that wraps another should
   * pass it on, or leave it out to be paged one request after the other.
   * @default undefined (the pager asks for page N+1 once page N is read)
   */
  listResponse?(opts: ListOptions, signal: AbortSignal): ListResponse<T>;
  /** False when the server or source cannot do streaming lists (`sendInitialEvents`). */
  readonly supportsWatchList?: boolean;
  /**
   * Which cluster, resource and slice of it this source reads. A controller
   * matches it against the writes this process made through `objectClient`,
   * to wait until its cache shows them (docs/semantics.md RYW-2). A source
   * that wraps another should pass it on.
   * @default undefined (a cache of this source is never waited for)
   */
  readonly identity?: SourceIdentity;
}

/**
 * One LIST response, read only as far as asked: see
 * {@link ListerWatcher.listResponse}.
 *
 * ## Example
 * ```ts
 * import { kubeSource } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const response = kubeSource(kc, 'v1/pods').listResponse({ limit: 500 }, new AbortController().signal);
 * const metadata = await response.head(); // the continue token, before any item is decoded
 * const page = await response.page();
 * console.log(metadata?.continue, page.items.length);
 * ```
 */
export interface ListResponse<T> {
  /**
   * Reads until the list's metadata has been read or the items begin,
   * whichever comes first (and sends the request, on the first call).
   *
   * @returns The metadata when it came before the items, else `undefined`; the same promise every call.
   * @throws The request's error (a `KubeApiError`, a `ConnectionError`, a `DecodeError`, the abort reason).
   */
  head(): Promise<ObjectList<T>['metadata'] | undefined>;
  /**
   * Reads the rest of the body.
   *
   * @returns The page; the same promise every call.
   */
  page(): Promise<ObjectList<T>>;
  /**
   * Reads on until at least `min` more items are decoded, and hands them
   * over: they are then not in the page that {@link ListResponse.page}
   * gives. `undefined` once the body ended with fewer: those come with the
   * page. A pager uses it to pass on an answer far larger than it asked for
   * (a server that ignored `limit`) in parts, instead of holding it whole.
   */
  take?(min: number): Promise<readonly T[] | undefined>;
  /** Ends the request wherever it is, and releases its connection; a pending `head` or `page` rejects. */
  cancel(): void;
}

/**
 * What a {@link ListerWatcher} reads, said plainly enough to match writes
 * against it: the cluster (its API server URL as the kubeconfig gives it,
 * without trailing slashes), the resource, and the namespace and selectors
 * that narrow it. `kubeSource` fills it in. Writes match by cluster, group
 * and plural; the version is left out, since every version of a resource
 * serves the same objects.
 *
 * ## Example
 * ```ts
 * import { kubeSource } from 'rxkube';
 * import { type SourceIdentity } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const id: SourceIdentity | undefined = kubeSource(kc, 'v1/configmaps', { namespace: 'prod' }).identity;
 * // { cluster: 'https://10.0.0.1:6443', group: '', version: 'v1', plural: 'configmaps', namespace: 'prod' }
 * ```
 */
export interface SourceIdentity {
  /** The API server's URL, normalised as `new URL()` does, without trailing slashes. */
  readonly cluster: string;
  /** `''` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Only objects of this namespace. @default undefined (every namespace) */
  readonly namespace?: string | undefined;
  /** Only objects whose labels match. @default undefined (no filter) */
  readonly labelSelector?: string | undefined;
  /** Only objects whose fields match. @default undefined (no filter) */
  readonly fieldSelector?: string | undefined;
}

/** Identifies a resource: `v1/pods`, `apps/v1/deployments`, or the parts. */
export type ResourceRef =
  | string
  | { readonly group?: string; readonly version: string; readonly plural: string; readonly namespaced?: boolean };

/**
 * An object reduced to its metadata, as the API server sends it to a
 * metadata-only list or watch (`kubeSource(kc, resource, { metadataOnly: true })`):
 * `kind: 'PartialObjectMetadata'`, `apiVersion: 'meta.k8s.io/v1'`, and the
 * object's full `metadata` (labels, annotations, owner references,
 * finalizers, resourceVersion, …), without spec or status.
 */
export interface PartialObjectMetadata extends KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: NonNullable<KubeObject['metadata']>;
}
