import { AsyncIterableX } from 'ix/asynciterable';
import { isExpired } from '../errors/api/guards.js';
import type { ListerWatcher, ListOptions, ListResponse, ObjectList } from './types.js';
import { describeValue } from '../options/validate.js';

/** One page from listPages. */
type ListPage<T> = ObjectList<T> & { readonly restarted: boolean };

/** Options of {@link listPages} and {@link listAll}. */
export interface PagerOptions {
  /**
   * Page size when `opts.limit` is unset or 0 (client-go's pager turns a zero
   * limit into its page size too). 0 asks for everything in one response.
   * @default 500
   */
  readonly pageSize?: number;
}

/**
 * Pages through a LIST with `limit` and `continue`, as an ix async iterable
 * that reads one page ahead and no further (docs/semantics.md P-1): the next
 * page is requested as soon as this page's continue token has been read
 * (with `kubeSource` and kube-apiserver, from the page's first bytes, since
 * the server writes the list's metadata before its items), and the page
 * after it only once the consumer asks for the next. The page asked for
 * early is cancelled when the iteration ends or `signal` aborts; its error is
 * thrown when the consumer asks for it. A source without `kubeSource`'s
 * stepped view, or a server that writes the token after the items, gets each
 * request once the page before it has ended and the consumer asks.
 *
 * Follows client-go's pager: requests after the first carry the continue
 * token and drop `resourceVersion` / `resourceVersionMatch` (the token pins
 * the snapshot). When a continue token has expired (410), the list starts
 * over from page one with the original options and the first page of the
 * restart carries `restarted: true`; should a token expire again during the
 * restart, one unpaged list (`limit` 0) is made instead, as client-go's
 * `FullListIfExpired` does, so the pager cannot loop forever on a busy
 * server. Any other error ends the iteration.
 *
 * Connections: with `kubeSource`, the pages travel over the process's
 * connection pool for the cluster: over HTTP/2 one connection carries them
 * all; over HTTP/1.1 the page asked for early takes a second connection
 * while the current one downloads, and the pages alternate between the two.
 *
 * ## Example
 * ```ts
 * import { kubeSource } from 'rxkube';
 * import { listPages } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare const signal: AbortSignal;
 *
 * let count = 0;
 * for await (const page of listPages(kubeSource(kc, 'v1/pods'), {}, signal)) {
 *   if (page.restarted) count = 0;
 *   count += page.items.length;
 * }
 * ```
 *
 * @param lw The source to list from.
 * @param opts The first request's options (`resourceVersion`, `resourceVersionMatch`, `limit`).
 * @param signal Aborts the request in flight and ends the iteration.
 * @param pagerOpts Page size.
 * @returns The pages, lazily; each iteration is a new list. A page's `restarted` is true on the first page of a
 *   restart: a continue token expired, so the list began again from page one and every page received before
 *   this one must be discarded.
 */
export function listPages<T>(
  lw: ListerWatcher<T>,
  opts: ListOptions,
  signal: AbortSignal,
  pagerOpts: PagerOptions = {},
): AsyncIterableX<ObjectList<T> & { readonly restarted: boolean }> {
  const pageSize = checkPageSize(pagerOpts.pageSize);
  return AsyncIterableX.from({ [Symbol.asyncIterator]: () => pages(lw, opts, signal, pageSize, false) });
}

/** A part of a page from {@link listPortions}: its items so far and the page's metadata as read before them, or the page's last part. */
export type ListPortion<T> = ListPage<T> & {
  /** The page's last part, whose metadata is the whole page's (a body may repeat its metadata after its items). */
  readonly complete: boolean;
};

/** Items handed on per part of an answer that came unpaged (asked for with `limit` 0). */
const UNPAGED_PORTION = 500;

/**
 * {@link listPages}, except that a page far larger than asked for is passed
 * on in parts as it is decoded, instead of whole once its last byte is in:
 * a part of `limit + 1` items (500 for an unpaged list) goes out as soon as
 * it is decoded, so a page of the size asked for still comes whole. That is
 * the answer of a server that ignored `limit` (kube-apiserver answers a
 * `"0"` list from its watch cache in one page) or of an unpaged list (a
 * relist at a resourceVersion, RF-10). Parts go out only when the page's
 * metadata came before its items, as kube-apiserver writes it, so the
 * first part already knows the snapshot's resourceVersion. Internal: the
 * informer's paged list reads this.
 *
 * @param lw The source to list from.
 * @param opts The first request's options.
 * @param signal Aborts the request in flight and ends the iteration.
 * @param pagerOpts Page size.
 * @returns The parts; `restarted` as in {@link listPages}, on the first part of a restart.
 */
export function listPortions<T>(lw: ListerWatcher<T>, opts: ListOptions, signal: AbortSignal, pagerOpts: PagerOptions = {}): AsyncIterableX<ListPortion<T>> {
  const pageSize = checkPageSize(pagerOpts.pageSize);
  return AsyncIterableX.from({ [Symbol.asyncIterator]: () => pages(lw, opts, signal, pageSize, true) as AsyncGenerator<ListPortion<T>, void, undefined> });
}

async function* pages<T>(lw: ListerWatcher<T>, opts: ListOptions, signal: AbortSignal, pageSize: number, portions: boolean): AsyncGenerator<ListPage<T> | ListPortion<T>, void, undefined> {
  signal.throwIfAborted();
  const limit = opts.limit === undefined || opts.limit === 0 ? pageSize : opts.limit;
  const { continue: _ignoredToken, ...fromStart } = opts;
  const first: ListOptions = { ...fromStart, limit };
  const stepped = lw.listResponse === undefined ? undefined : (lw as ListerWatcher<T> & Required<Pick<ListerWatcher<T>, 'listResponse'>>);
  let restarts = 0;
  let restarted = false;
  let request = first;
  /** The next page's response, opened as soon as this page's continue token was read (P-1), and its token. */
  let ahead: { readonly response: ListResponse<T>; readonly token: string } | undefined;
  /** The response whose parts are going out, cancelled should the iteration end before its last part. */
  let reading: ListResponse<T> | undefined;
  try {
    for (;;) {
      signal.throwIfAborted();
      let page: ObjectList<T>;
      try {
        if (stepped === undefined) {
          page = await lw.list(request, signal);
        } else {
          const current = ahead?.response ?? stepped.listResponse(request, signal);
          ahead = undefined;
          const head = await current.head();
          const early = head?.continue;
          if (early !== undefined && early !== '') {
            const response = stepped.listResponse(continued(request, early), signal);
            // Its failure (a 410 included) is read when the consumer asks for that page, as without the head start.
            response.head().catch(() => undefined);
            ahead = { response, token: early };
          }
          if (portions && head !== undefined && current.take !== undefined) {
            reading = current;
            const size = request.limit !== undefined && request.limit > 0 ? request.limit + 1 : UNPAGED_PORTION;
            for (let part = await current.take(size); part !== undefined; part = await current.take(size)) {
              yield { metadata: head, items: part, restarted, complete: false };
              restarted = false;
            }
          }
          page = await current.page();
          reading = undefined;
        }
      } catch (err) {
        ahead?.response.cancel();
        ahead = undefined;
        reading?.cancel();
        reading = undefined;
        const expiredContinue = isExpired(err) && request.continue !== undefined && request.continue !== '';
        if (!expiredContinue || signal.aborted) throw err;
        restarts++;
        restarted = true;
        request = restarts === 1 ? first : { ...first, limit: 0 };
        continue;
      }
      yield portions ? { ...page, restarted, complete: true } : { ...page, restarted };
      restarted = false;
      const token = page.metadata.continue;
      if (token === undefined || token === '') return;
      // A body with a second metadata after its items (JSON keeps the last) may name another token than the early one.
      if (ahead !== undefined && ahead.token !== token) {
        ahead.response.cancel();
        ahead = undefined;
      }
      request = continued(request, token);
    }
  } finally {
    ahead?.response.cancel();
    reading?.cancel();
  }
}

/** The request for the page after `request`'s: the token pins the snapshot, so the resourceVersion options go; the rest (limit, hints) stays. */
function continued(request: ListOptions, token: string): ListOptions {
  const { resourceVersion: _pinned, resourceVersionMatch: _match, ...sameList } = request;
  return { ...sameList, continue: token };
}

/** What {@link listAll} returns: every item and the list's resourceVersion. */
export interface ListAllResult<T> {
  readonly items: T[];
  /** The resourceVersion of the (first page of the) list: the snapshot the items describe. */
  readonly resourceVersion: string;
  /** True when the list came in more than one page. */
  readonly paginated: boolean;
}

/**
 * Lists every object, page by page with {@link listPages}, keeping only
 * the decoded objects (no response text is held).
 *
 * ## Example
 * ```ts
 * import { kubeSource } from 'rxkube';
 * import { listAll } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * declare const signal: AbortSignal;
 *
 * const { items, resourceVersion } = await listAll(kubeSource(kc, 'v1/pods'), { resourceVersion: '0' }, signal);
 * ```
 *
 * @param lw The source.
 * @param opts The first request's options.
 * @param signal Aborts the list.
 * @param pagerOpts Page size.
 * @returns Items and the resourceVersion of the snapshot.
 */
export async function listAll<T>(
  lw: ListerWatcher<T>,
  opts: ListOptions,
  signal: AbortSignal,
  pagerOpts: PagerOptions = {},
): Promise<ListAllResult<T>> {
  let items: T[] = [];
  let resourceVersion = '';
  let pageCount = 0;
  for await (const page of listPages(lw, opts, signal, pagerOpts)) {
    if (page.restarted || pageCount === 0) {
      items = [];
      pageCount = 0;
      resourceVersion = page.metadata.resourceVersion ?? '';
    }
    pageCount++;
    for (const item of page.items) items.push(item);
  }
  return { items, resourceVersion, paginated: pageCount > 1 };
}

function checkPageSize(pageSize: number | undefined): number {
  const value = pageSize ?? 500;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`pageSize: expected a non-negative integer, got ${describeValue(pageSize)}`);
  }
  return value;
}
