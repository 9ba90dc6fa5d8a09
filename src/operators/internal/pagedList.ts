/**
 * The paged LIST strategy of reflect(): which resourceVersion and page size a
 * (re)list asks for, and the one immediate consistent re-read when the
 * snapshot is gone or not there yet (docs/semantics.md RF-9..RF-12).
 */
import { listAll, type ListAllResult } from '../../sources/pager.js';
import { isExpired, isTooLargeResourceVersion } from '../reflectClassify.js';
import { DecodeError } from '../../sources/errors/index.js';
import type { ReflectorContext } from './reflectorContext.js';
import { preview } from './watchEvents.js';

/** Lists with limit/continue and emits one Replace per success. */
export class PagedList<T> {
  /** The subscription's shared state. */
  readonly #ctx: ReflectorContext<T>;
  /** A "0" list once came back paginated, so keep paging (client-go's sticky paginatedResult). */
  #paginatedResult = false;

  constructor(ctx: ReflectorContext<T>) {
    this.#ctx = ctx;
  }

  /**
   * One list cycle; emits Replace on success.
   *
   * @throws the list's error (after the consistent re-read, when that applied and failed too)
   */
  async run(): Promise<void> {
    const ctx = this.#ctx;
    const rv = ctx.rvUnavailable ? '' : ctx.lastSyncRv === '' ? '0' : ctx.lastSyncRv;
    let result: ListAllResult<T>;
    try {
      result = await this.#listOnce(rv);
    } catch (error) {
      if (ctx.stopped || (!isExpired(error) && !isTooLargeResourceVersion(error))) throw error;
      // The snapshot is gone (or not there yet): one consistent read at once (docs/semantics.md RF-11).
      ctx.rvUnavailable = true;
      if (ctx.report(error)) return;
      result = await this.#listOnce('');
    }
    if (ctx.stopped) return;
    if (rv === '0' && result.paginated) this.#paginatedResult = true;
    ctx.replace(this.#objectsOnly(result.items), result.resourceVersion);
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

  #listOnce(rv: string): Promise<ListAllResult<T>> {
    const limit = this.limitFor(rv);
    // `limit` is always sent, 0 included, and is also the pager's page size so a source default cannot re-page it.
    const opts = rv === '' ? { limit } : { resourceVersion: rv, limit };
    return listAll(this.#ctx.lw, opts, this.#ctx.signal, { pageSize: limit });
  }
}
