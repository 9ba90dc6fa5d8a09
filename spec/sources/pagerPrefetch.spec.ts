import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectionError, DecodeError, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { DecodedListResponse } from '../../src/sources/listResponse.js';
import { listAll, listPages } from '../../src/sources/pager.js';
import type { ListerWatcher, ListOptions, ListResponse } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pools } from '../../src/transport/pool.js';
import { waitFor } from '../helpers/waitFor.js';

// The pager asks for the next page as soon as this page's continue token is
// read, one page ahead and no further (docs/semantics.md P-1).

interface Pod {
  metadata: { name: string; namespace?: string };
}

const PODS = { version: 'v1', plural: 'pods' } as const;
/** A trickle that passes a whole page at once: it only takes a place in the fault queue, so the fault after it hits the second list. */
const PASS = { type: 'trickle', bytesPerChunk: 1 << 20, intervalMs: 0 } as const;

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 60_000 });
});

afterEach(async () => {
  await server.close();
});

async function pods(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: 'default' } });
}

function names(items: readonly Pod[]): string[] {
  return items.map((p) => p.metadata.name);
}

/** Counts the HTTP requests this process creates, from undici's diagnostics channel. */
function countRequests(): { readonly count: () => number; readonly stop: () => void } {
  let n = 0;
  const onCreate = (): void => void n++;
  diagnostics.subscribe('undici:request:create', onCreate);
  return { count: () => n, stop: () => diagnostics.unsubscribe('undici:request:create', onCreate) };
}

async function nothingOpen(): Promise<void> {
  await waitFor(() => server.stats.connections === 0 && pools.size === 0, 'every connection and pool to close');
}

describe('the pager over kubeSource and the simulator', () => {
  it("asks for the next page as soon as this page's continue token is read, before this page's items are in", async () => {
    await pods(4);
    // The first page comes 16 bytes at a time: its metadata is in long before its items.
    server.faults.inject({ type: 'trickle', bytesPerChunk: 16, intervalMs: 20 }, { verb: 'list' });
    const before = server.stats.requests;
    const it = listPages(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })[Symbol.asyncIterator]();
    let handedOver = false;
    const first = it.next().then((r) => {
      handedOver = true;
      return r;
    });
    await waitFor(() => server.stats.requests - before === 2, 'the second page to be asked for');
    expect(handedOver).toBe(false);
    const page = await first;
    expect(page.done === true ? [] : names(page.value.items)).toEqual(['p0', 'p1']);
    const second = await it.next();
    expect(second.done === true ? [] : names(second.value.items)).toEqual(['p2', 'p3']);
    expect((await it.next()).done).toBe(true);
    expect(server.stats.requests - before).toBe(2);
    await nothingOpen();
  });

  it('a server that writes the continue token after the items gets the next request once the page has ended', async () => {
    await pods(5);
    server.faults.inject({ type: 'listMetadataLast' }, { verb: 'list', times: Infinity });
    const requests = countRequests();
    try {
      const seen: string[][] = [];
      for await (const page of listPages(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
        seen.push(names(page.items));
        // Nothing was asked for beyond the page handed over.
        expect(requests.count()).toBe(seen.length);
      }
      expect(seen).toEqual([['p0', 'p1'], ['p2', 'p3'], ['p4']]);
    } finally {
      requests.stop();
    }
    await nothingOpen();
  });

  it('a consumer that stops cancels the next page, asked for early and not answered yet', async () => {
    await pods(6);
    server.faults.inject(PASS, { verb: 'list' });
    server.faults.inject({ type: 'stall' }, { verb: 'list' });
    const before = server.stats.requests;
    const it = listPages(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    await waitFor(() => server.stats.requests - before === 2, 'the second page to be asked for');
    await it.return?.(undefined);
    // The second page would never be answered: only its cancellation closes the connection.
    await nothingOpen();
  });

  it('aborting the signal cancels the next page, asked for early and not answered yet', async () => {
    await pods(6);
    server.faults.inject(PASS, { verb: 'list' });
    server.faults.inject({ type: 'stall' }, { verb: 'list' });
    const before = server.stats.requests;
    const ac = new AbortController();
    const it = listPages(kubeSource<Pod>(server.kubeConfig(), PODS), {}, ac.signal, { pageSize: 2 })[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    await waitFor(() => server.stats.requests - before === 2, 'the second page to be asked for');
    ac.abort();
    await nothingOpen();
    await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a 410 on the page asked for early restarts the list once that page is asked for, as without the head start', async () => {
    await pods(6);
    server.faults.inject(PASS, { verb: 'list' });
    server.faults.inject({ type: 'status', status: 410, reason: 'Expired' }, { verb: 'list' });
    const seen: { names: string[]; restarted: boolean }[] = [];
    for await (const page of listPages(kubeSource<Pod>(server.kubeConfig(), PODS), { resourceVersion: '0' }, new AbortController().signal, { pageSize: 2 })) {
      seen.push({ names: names(page.items), restarted: page.restarted });
    }
    expect(seen).toEqual([
      { names: ['p0', 'p1'], restarted: false },
      { names: ['p0', 'p1'], restarted: true },
      { names: ['p2', 'p3'], restarted: false },
      { names: ['p4', 'p5'], restarted: false },
    ]);
    server.faults.inject(PASS, { verb: 'list' });
    server.faults.inject({ type: 'status', status: 410, reason: 'Expired' }, { verb: 'list' });
    const all = await listAll(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 });
    expect(names(all.items)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
    await nothingOpen();
  });

  it('another error on the page asked for early reaches the consumer when it asks for that page', async () => {
    await pods(6);
    server.faults.inject(PASS, { verb: 'list' });
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'list' });
    const seen: string[][] = [];
    const failure = (async () => {
      for await (const page of listPages(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 2 })) {
        seen.push(names(page.items));
      }
    })();
    await expect(failure).rejects.toBeInstanceOf(KubeApiError);
    expect(seen).toEqual([['p0', 'p1']]);
    await nothingOpen();
  });

  it("a page cut off after its metadata fails with its own error, and the next page's request is cancelled", async () => {
    await pods(40);
    // Half of the first page's body: its metadata, and the next page already asked for.
    server.faults.inject({ type: 'endMidLine' }, { verb: 'list' });
    const err = await listAll(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 20 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The page's own error, not the cancellation of the next page's request.
    expect(err instanceof DecodeError || err instanceof ConnectionError).toBe(true);
    await nothingOpen();
  });
});

/** A list body of `items` names, metadata first (or last), cut into chunks of `chunk` bytes. */
function body(items: string[], token: string | undefined, metadataLast: boolean, chunk: number): Buffer[] {
  const meta = `"metadata":{"resourceVersion":"9"${token === undefined ? '' : `,"continue":"${token}"`}}`;
  const list = `"items":[${items.map((n) => `{"metadata":{"name":"${n}"}}`).join(',')}]`;
  const bytes = Buffer.from(`{"kind":"PodList",${metadataLast ? `${list},${meta}` : `${meta},${list}`}}`);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) out.push(bytes.subarray(i, i + chunk));
  return out;
}

/**
 * A source with the pager's stepped view over in-memory bodies of 30-byte
 * chunks, recording every response it opens and how many chunks of each
 * were read, so how far ahead the pager reads can be asserted exactly.
 */
function steppedSource(all: string[], pageSize: number) {
  const opened: { opts: ListOptions; pulled: number; response: ListResponse<Pod> }[] = [];
  const lw: ListerWatcher<Pod> & { listResponse(o: ListOptions, s: AbortSignal): ListResponse<Pod> } = {
    list() {
      throw new Error('the pager reads this source in steps');
    },
    watch() {
      throw new Error('not used');
    },
    listResponse(opts: ListOptions, signal: AbortSignal): ListResponse<Pod> {
      const start = opts.continue === undefined ? 0 : Number(opts.continue);
      const end = Math.min(all.length, start + pageSize);
      const chunks = body(all.slice(start, end), end < all.length ? String(end) : undefined, false, 30);
      const entry = { opts, pulled: 0, response: undefined as unknown as ListResponse<Pod> };
      async function* read(s: AbortSignal): AsyncGenerator<Buffer, void, undefined> {
        for (const c of chunks) {
          s.throwIfAborted();
          entry.pulled++;
          yield c;
        }
      }
      entry.response = new DecodedListResponse<Pod>(read, signal, {});
      opened.push(entry);
      return entry.response;
    },
  };
  return { lw, opened };
}

describe('how far ahead the pager reads', () => {
  const all = Array.from({ length: 10 }, (_, i) => `o${i}`);

  it('holds at most the page being read and the next response, read only as far as its metadata', async () => {
    const { lw, opened } = steppedSource(all, 3);
    const it = listPages(lw, {}, new AbortController().signal, { pageSize: 3 })[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done === true ? [] : names(first.value.items)).toEqual(['o0', 'o1', 'o2']);
    expect(opened.map((o) => o.opts.continue)).toEqual([undefined, '3']);
    // The second page's head is read: it names the third page, which is still not asked for.
    const head = await opened[1]?.response.head();
    expect(head?.continue).toBe('6');
    expect(opened).toHaveLength(2);
    const whole = body(['o3', 'o4', 'o5'], '6', false, 30).length;
    expect(opened[1]?.pulled).toBeLessThan(whole);
    // Asking for the second page opens the third at once, from the token already read.
    const second = await it.next();
    expect(second.done === true ? [] : names(second.value.items)).toEqual(['o3', 'o4', 'o5']);
    expect(opened.map((o) => o.opts.continue)).toEqual([undefined, '3', '6']);
    expect(opened[1]?.pulled).toBe(whole);
    await it.return?.(undefined);
  });

  it('reads a response whose metadata comes after its items without a head start', async () => {
    const chunks = body(['a', 'b'], 'next', true, 30);
    let pulled = 0;
    async function* read(): AsyncGenerator<Buffer, void, undefined> {
      for (const c of chunks) {
        pulled++;
        yield c;
      }
    }
    const response = new DecodedListResponse<Pod>(read, new AbortController().signal, {});
    expect(await response.head()).toBeUndefined();
    expect(pulled).toBeLessThan(chunks.length);
    const page = await response.page();
    expect(names(page.items)).toEqual(['a', 'b']);
    expect(page.metadata.continue).toBe('next');
  });
});
