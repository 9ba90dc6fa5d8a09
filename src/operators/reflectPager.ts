import type { ListerWatcher, ListOptions, ObjectList } from '../sources/types.js';
import { isExpired } from './reflectClassify.js';

/** Runs one request with its own AbortSignal, so the caller can abort it on teardown. */
export type RequestRunner = <R>(send: (signal: AbortSignal) => Promise<R>) => Promise<R>;

/** One page as the pager hands it out. */
export interface ListPage<T> {
  readonly page: ObjectList<T>;
  /** True when this page is a full list replacing every page before it (the continue token expired). */
  readonly restart: boolean;
}

/** The outcome of a complete paged LIST. */
export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string;
  /** True when the server split the answer into more than one page. */
  readonly paginated: boolean;
}

/**
 * Pages of one LIST, each requested only when the previous one has been
 * consumed. Pages after the first carry only `limit` and `continue` (the
 * token pins the snapshot). When a continue token has expired, one full
 * list at the original resourceVersion is requested instead and marked
 * `restart` (client-go's pager with FullListIfExpired).
 *
 * @param lw where the pages come from
 * @param resourceVersion the first page's resourceVersion ("" for a consistent read)
 * @param limit page size; 0 asks for everything at once
 * @param request runs each request with its own abort signal
 * @returns an async iterable of pages
 */
export async function* listPages<T>(
  lw: ListerWatcher<T>,
  resourceVersion: string,
  limit: number,
  request: RequestRunner,
): AsyncGenerator<ListPage<T>, void, undefined> {
  // `limit` is always sent, 0 included: a source may otherwise apply a page size of its own.
  const first: ListOptions = { ...(resourceVersion === '' ? {} : { resourceVersion }), limit };
  let token: string | undefined;
  for (;;) {
    const opts: ListOptions = token === undefined ? first : { limit, continue: token };
    let page: ObjectList<T>;
    try {
      page = await request((signal) => lw.list(opts, signal));
    } catch (err) {
      if (token === undefined || !isExpired(err)) throw err;
      const full: ListOptions = { ...(resourceVersion === '' ? {} : { resourceVersion }), limit: 0 };
      yield { page: await request((signal) => lw.list(full, signal)), restart: true };
      return;
    }
    yield { page, restart: false };
    const next = page.metadata.continue;
    if (next === undefined || next === '') return;
    token = next;
  }
}

/**
 * Collects every page of one LIST into a single item array, keeping the
 * resourceVersion of the first page (the snapshot the token pins).
 *
 * @param lw where the pages come from
 * @param resourceVersion the first page's resourceVersion
 * @param limit page size; 0 for unlimited
 * @param request runs each request with its own abort signal
 * @returns all items, the list's resourceVersion and whether it was paginated
 */
export async function listAll<T>(
  lw: ListerWatcher<T>,
  resourceVersion: string,
  limit: number,
  request: RequestRunner,
): Promise<ListResult<T>> {
  let items: T[] = [];
  let listRv: string | undefined;
  let pages = 0;
  for await (const { page, restart } of listPages(lw, resourceVersion, limit, request)) {
    if (restart) {
      items = [...page.items];
      listRv = page.metadata.resourceVersion ?? '';
      continue;
    }
    pages += 1;
    listRv ??= page.metadata.resourceVersion ?? '';
    for (const item of page.items) items.push(item);
  }
  return { items, resourceVersion: listRv ?? '', paginated: pages > 1 };
}
