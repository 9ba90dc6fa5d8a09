import { describe, expect, it } from 'vitest';
import { isExpired, isServerError, KubeApiError } from '../../src/errors/api/index.js';
import { errorFromStatus } from '../../src/sources/httpErrors.js';
import { listAll, listPages } from '../../src/sources/pager.js';
import type { ListerWatcher, ListOptions, ObjectList } from '../../src/sources/types.js';

interface Obj {
  metadata: { name: string };
}

/**
 * An in-memory source that pages a fixed set of objects and records every
 * request, so the pager's request sequence can be asserted exactly. A
 * `fail` hook can make any request throw.
 */
function memorySource(names: string[], rv: string, fail?: (o: ListOptions, call: number) => Error | undefined) {
  const calls: ListOptions[] = [];
  const lw: ListerWatcher<Obj> = {
    async list(o: ListOptions, signal: AbortSignal): Promise<ObjectList<Obj>> {
      signal.throwIfAborted();
      calls.push({ ...o });
      const err = fail?.(o, calls.length);
      if (err !== undefined) throw err;
      const start = o.continue === undefined ? 0 : Number(o.continue);
      const limit = o.limit === undefined || o.limit === 0 ? names.length : o.limit;
      const end = Math.min(names.length, start + limit);
      return {
        metadata: { resourceVersion: rv, ...(end < names.length ? { continue: String(end) } : {}) },
        items: names.slice(start, end).map((name) => ({ metadata: { name } })),
      };
    },
    watch() {
      throw new Error('not used');
    },
  };
  return { lw, calls };
}

const names = Array.from({ length: 7 }, (_, i) => `o${i}`);

describe('listPages', () => {
  it('pages with limit/continue and drops resourceVersion and resourceVersionMatch on continue requests', async () => {
    const { lw, calls } = memorySource(names, '10');
    const pages = [];
    for await (const page of listPages(lw, { resourceVersion: '5', resourceVersionMatch: 'NotOlderThan' }, new AbortController().signal, { pageSize: 3 })) {
      pages.push(page.items.map((i) => i.metadata.name));
    }
    expect(pages).toEqual([['o0', 'o1', 'o2'], ['o3', 'o4', 'o5'], ['o6']]);
    expect(calls).toEqual([
      { resourceVersion: '5', resourceVersionMatch: 'NotOlderThan', limit: 3, continue: undefined },
      { limit: 3, continue: '3' },
      { limit: 3, continue: '6' },
    ]);
  });

  it('is pull-based: the next page is requested only when the consumer asks for it', async () => {
    const { lw, calls } = memorySource(names, '10');
    const it = listPages(lw, {}, new AbortController().signal, { pageSize: 2 })[Symbol.asyncIterator]();
    expect(calls).toHaveLength(0);
    await it.next();
    expect(calls).toHaveLength(1);
    await it.next();
    expect(calls).toHaveLength(2);
    await it.return?.();
    expect(calls).toHaveLength(2);
  });

  it('uses the page size when limit is 0 or unset, and the given limit otherwise', async () => {
    const a = memorySource(names, '1');
    await listAll(a.lw, { limit: 0 }, new AbortController().signal);
    expect(a.calls[0]?.limit).toBe(500);
    const b = memorySource(names, '1');
    await listAll(b.lw, { limit: 4 }, new AbortController().signal);
    expect(b.calls.map((c) => c.limit)).toEqual([4, 4]);
  });

  it('restarts from page one when a continue token expires, flagging the restart', async () => {
    const { lw, calls } = memorySource(names, '10', (_o, call) => (call === 2 ? errorFromStatus(410, { reason: 'Expired' }) : undefined));
    const pages = [];
    for await (const page of listPages(lw, { resourceVersion: '0' }, new AbortController().signal, { pageSize: 3 })) {
      pages.push({ names: page.items.map((i) => i.metadata.name), restarted: page.restarted });
    }
    expect(pages).toEqual([
      { names: ['o0', 'o1', 'o2'], restarted: false },
      { names: ['o0', 'o1', 'o2'], restarted: true },
      { names: ['o3', 'o4', 'o5'], restarted: false },
      { names: ['o6'], restarted: false },
    ]);
    expect(calls[2]).toEqual({ resourceVersion: '0', limit: 3, continue: undefined });
  });

  it('falls back to one unpaged list when a continue token expires again during the restart', async () => {
    const { lw, calls } = memorySource(names, '10', (o) => (o.continue !== undefined ? new KubeApiError(410, 'expired') : undefined));
    const result = await listAll(lw, { resourceVersion: '0' }, new AbortController().signal, { pageSize: 3 });
    expect(result.items.map((i) => i.metadata.name)).toEqual(names);
    expect(result.resourceVersion).toBe('10');
    expect(calls.at(-1)).toEqual({ resourceVersion: '0', limit: 0, continue: undefined });
  });

  it('passes on a 410 of the first page and any other error', async () => {
    const first = memorySource(names, '1', (_o, call) => (call === 1 ? new KubeApiError(410, 'gone') : undefined));
    await expect(listAll(first.lw, {}, new AbortController().signal)).rejects.toSatisfy(isExpired);
    const other = memorySource(names, '1', (_o, call) => (call === 2 ? new KubeApiError(500, 'boom') : undefined));
    await expect(listAll(other.lw, {}, new AbortController().signal, { pageSize: 2 })).rejects.toSatisfy(isServerError);
    expect(other.calls).toHaveLength(2);
  });

  it('stops at once when the signal is aborted', async () => {
    const ac = new AbortController();
    const { lw, calls } = memorySource(names, '1');
    const pages = listPages(lw, {}, ac.signal, { pageSize: 2 });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const page of pages) {
          seen.push(page.items.length);
          ac.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(seen).toEqual([2]);
    expect(calls).toHaveLength(1);
  });

  it('rejects a bad page size', () => {
    expect(() => listPages(memorySource(names, '1').lw, {}, new AbortController().signal, { pageSize: -1 })).toThrow(TypeError);
  });
});

describe('listAll', () => {
  it('collects all items with the first page resourceVersion and whether it was paginated', async () => {
    const { lw } = memorySource(names, '77');
    const paged = await listAll(lw, {}, new AbortController().signal, { pageSize: 3 });
    expect(paged.items.map((i) => i.metadata.name)).toEqual(names);
    expect(paged).toMatchObject({ resourceVersion: '77', paginated: true });
    const single = await listAll(lw, {}, new AbortController().signal);
    expect(single.paginated).toBe(false);
  });
});
