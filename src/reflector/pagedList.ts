/**
 * The paged LIST strategy of reflect(): which resourceVersion and page size a
 * (re)list asks for, and the one immediate consistent re-read when the
 * snapshot is gone or not there yet (docs/semantics.md RF-9..RF-12).
 */
import { listAll, listPortions } from '../sources/pager.js';
import type { ListOptions } from '../sources/types.js';
import { isExpired, isTooLargeResourceVersion } from './classify.js';
import { DecodeError } from '../errors/api/index.js';
import type { ReflectorContext } from './reflectorContext.js';
import { preview } from './watchEvents.js';

/** Lists with limit/continue and emits one Replace per success, or its pages as they arrive. */
export class PagedList<T> {
  /** The subscription's shared state. */
  readonly #ctx: ReflectorContext<T>;
  /** A "0" list once came back paginated, so keep paging (client-go's sticky paginatedResult). */
  #paginatedResult = false;

  constructor(ctx: ReflectorContext<T>) {
    this.#ctx = ctx;
  }

  /**
   * One list cycle; emits Replace (or its pages, then ReplaceEnd) on success.
   *
   * @throws the list's error (after the consistent re-read, when that applied and failed too)
   */
  async run(): Promise<void> {
    const ctx = this.#ctx;
    const rv = this.#listRv();
    try {
      await this.#listOnce(rv);
    } catch (error) {
      if (ctx.stopped || (!isExpired(error) && !isTooLargeResourceVersion(error))) throw error;
      // The snapshot is gone (or not there yet): one consistent read at once (docs/semantics.md RF-11).
      ctx.rvUnavailable = true;
      if (ctx.report(error)) return;
      await this.#listOnce('');
    }
  }

  /** The resourceVersion a list asks for (docs/semantics.md RF-9, RF-36). */
  #listRv(): string {
    const ctx = this.#ctx;
    if (ctx.rvUnavailable) return '';
    // Pages of a failed list already went out: the next list must not be older than they were.
    if (ctx.partialListRv !== '') return ctx.partialListRv;
    return ctx.lastSyncRv === '' ? '0' : ctx.lastSyncRv;
  }

  async #listOnce(rv: string): Promise<void> {
    const ctx = this.#ctx;
    const limit = this.limitFor(rv);
    // `limit` is always sent, 0 included, and is also the pager's page size so a source default cannot re-page it.
    const hint = ctx.opts.stripManagedFields ? { stripManagedFields: true } : {};
    const opts: ListOptions = rv === '' ? { limit, ...hint } : { resourceVersion: rv, limit, ...hint };
    if (ctx.opts.listDelivery === 'pages') {
      await this.#deliverPages(rv, opts, limit);
      return;
    }
    const result = await listAll(ctx.lw, opts, ctx.signal, { pageSize: limit });
    if (ctx.stopped) return;
    if (rv === '0' && result.paginated) this.#paginatedResult = true;
    ctx.replace(this.#objectsOnly(result.items), result.resourceVersion);
  }

  /**
   * Emits each page as it arrives (docs/semantics.md RF-35), and a page far
   * larger than asked for in parts as it is decoded. The pager asked for
   * the next page from this page's first bytes (P-1); asking it for that
   * page before this one is emitted opens the page after, and the request is
   * let out before the page is applied, so the server prepares it while the
   * consumer works.
   */
  async #deliverPages(rv: string, opts: ListOptions, limit: number): Promise<void> {
    const ctx = this.#ctx;
    const parts = listPortions(ctx.lw, opts, ctx.signal, { pageSize: limit })[Symbol.asyncIterator]();
    let next = prefetched(parts);
    let snapshotRv = '';
    // Whether a part came since the list began, and how many complete pages came since it began (or began again).
    let started = false;
    let pagesDone = 0;
    let emitted = false;
    try {
      for (;;) {
        const result = await next;
        if (result.done === true || ctx.stopped) break;
        const part = result.value;
        const first = !started || part.restarted;
        started = true;
        if (first) pagesDone = 0;
        // The resourceVersion of the first page, as its metadata was read first and, should it differ, as its body ends.
        if (first || (part.complete && pagesDone === 0)) snapshotRv = part.metadata.resourceVersion ?? '';
        if (part.complete) pagesDone++;
        next = prefetched(parts);
        if (part.complete && part.metadata.continue !== undefined && part.metadata.continue !== '') await letRequestOut();
        if (ctx.stopped) break;
        emitted = true;
        ctx.replacePage(this.#objectsOnly(part.items), first);
      }
    } catch (error) {
      if (emitted && snapshotRv !== '') ctx.partialListRv = snapshotRv;
      throw error;
    } finally {
      if (ctx.stopped) void parts.return?.(undefined).catch(() => undefined);
    }
    if (ctx.stopped) return;
    if (rv === '0' && pagesDone > 1) this.#paginatedResult = true;
    ctx.replaceEnd(snapshotRv);
  }

  /** A list item that is not an object cannot be an API object: reported and skipped, as a watch does. */
  #objectsOnly(items: readonly T[]): readonly T[] {
    if (items.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item))) return items;
    return items.filter((item) => {
      if (item !== null && typeof item === 'object' && !Array.isArray(item)) return true;
      this.#ctx.report(new DecodeError('list item that is not an object', preview(item), -1));
      return false;
    });
  }

  /** Page size of a list at `rv` (docs/semantics.md RF-10): the caller's choice always wins. */
  limitFor(rv: string): number {
    const { pageSize, pageSizeExplicit } = this.#ctx.opts;
    if (pageSizeExplicit) return pageSize;
    // Unpaged, a list at a specific resourceVersion can be served from the watch cache.
    return this.#paginatedResult || rv === '' || rv === '0' ? pageSize : 0;
  }

}

/**
 * One turn of the event loop, so a request just started is written to its
 * socket before the caller goes on with synchronous work.
 */
function letRequestOut(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The next page, requested now and awaited later: a rejection while it waits
 * is handled here, and still reaches whoever awaits the returned promise.
 */
function prefetched<P>(pages: AsyncIterator<P>): Promise<IteratorResult<P>> {
  const next = pages.next();
  next.catch(() => undefined);
  return next;
}
