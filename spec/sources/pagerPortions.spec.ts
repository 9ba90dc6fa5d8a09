import { afterEach, describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { DecodedListResponse } from '../../src/sources/listResponse.js';
import { listPortions, type ListPortion } from '../../src/sources/pager.js';
import type { ListerWatcher, ListOptions, ListResponse, WatchEvent } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

// A page far larger than the pager asked for (a server that ignored `limit`,
// or an unpaged list) is passed on in parts as it is decoded (docs/semantics.md
// P-16, S-37), and a page of the size asked for still comes whole.

interface Pod {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion?: string };
}

const PODS = { version: 'v1', plural: 'pods' } as const;

const names = (items: readonly Pod[]): string[] => items.map((p) => p.metadata.name);
const shape = (parts: readonly ListPortion<Pod>[]): [number, boolean][] => parts.map((p) => [p.items.length, p.complete]);

/** A door the body waits at before its last chunk, and whether the reader has reached it. */
interface Gate {
  readonly open: () => void;
  readonly reached: () => boolean;
  /** Whether the request's signal was aborted. */
  readonly aborted: () => boolean;
}

/**
 * A source whose one list answer holds `count` pods whatever `limit` asked
 * for, metadata first (or last), in 4 KiB chunks; the last chunk waits at a
 * gate, so what the pager hands on before the gate opens was handed on
 * before the body ended.
 */
function unpagedSource(count: number, metadataLast = false): { readonly lw: ListerWatcher<Pod>; readonly gate: Gate } {
  let release: () => void = () => {};
  const opened = new Promise<void>((resolve) => (release = resolve));
  let reached = false;
  let aborted = false;
  const meta = '"metadata":{"resourceVersion":"7"}';
  const items = `"items":[${Array.from({ length: count }, (_, i) => `{"metadata":{"name":"p${i}","namespace":"default","resourceVersion":"${i + 1}"}}`).join(',')}]`;
  const bytes = Buffer.from(`{"kind":"PodList","apiVersion":"v1",${metadataLast ? `${items},${meta}` : `${meta},${items}`}}`);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 4096) chunks.push(bytes.subarray(i, i + 4096));
  async function* read(signal: AbortSignal): AsyncGenerator<Buffer, void, undefined> {
    signal.addEventListener('abort', () => {
      aborted = true;
      release();
    });
    for (let i = 0; i < chunks.length; i++) {
      if (i === chunks.length - 1) {
        reached = true;
        await opened;
      }
      signal.throwIfAborted();
      yield chunks[i] as Buffer;
    }
  }
  const lw: ListerWatcher<Pod> = {
    list: () => Promise.reject(new Error('the pager reads this source in steps')),
    watch: (_opts, signal) => ({
      async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<Pod>, void, undefined> {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      },
    }),
    listResponse: (_opts: ListOptions, signal: AbortSignal): ListResponse<Pod> => new DecodedListResponse<Pod>(read, signal, {}),
  };
  return { lw, gate: { open: release, reached: () => reached, aborted: () => aborted } };
}

let server: ApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a page far larger than asked for goes on in parts', () => {
  it('hands on parts of at least limit + 1 items while the body is still coming, then the rest with the whole metadata', async () => {
    const { lw, gate } = unpagedSource(1_100);
    const it = listPortions(lw, { limit: 100 }, new AbortController().signal, { pageSize: 100 })[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).toBe(false);
    const part = first.value as ListPortion<Pod>;
    // The gate is still shut: this part went out before the body's last chunk was read.
    expect(gate.aborted()).toBe(false);
    expect([part.complete, part.restarted, part.metadata.resourceVersion]).toEqual([false, false, '7']);
    expect(part.items.length).toBeGreaterThanOrEqual(101);
    expect(names(part.items).slice(0, 2)).toEqual(['p0', 'p1']);
    const parts = [part];
    // Parts keep coming up to the gate; the one that needs the last chunk waits there.
    const atGate = waitFor(() => gate.reached(), 'the reader to reach the last chunk').then(() => 'gate' as const);
    let pending = it.next();
    for (let r = await Promise.race([pending, atGate]); r !== 'gate'; r = await Promise.race([pending, atGate])) {
      parts.push(r.value as ListPortion<Pod>);
      pending = it.next();
    }
    gate.open();
    for (let r = await pending; r.done !== true; r = await it.next()) parts.push(r.value);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.slice(0, -1).every((p) => !p.complete && p.items.length >= 101)).toBe(true);
    expect(parts.at(-1)?.complete).toBe(true);
    expect(parts.flatMap((p) => names(p.items))).toEqual(Array.from({ length: 1_100 }, (_, i) => `p${i}`));
    expect(parts.at(-1)?.metadata.resourceVersion).toBe('7');
  });

  it('an unpaged list (limit 0) goes in parts of at least 500', async () => {
    const { lw, gate } = unpagedSource(1_203);
    gate.open();
    const parts: ListPortion<Pod>[] = [];
    for await (const p of listPortions(lw, { limit: 0 }, new AbortController().signal, { pageSize: 0 })) parts.push(p);
    expect(parts.map((p) => p.complete)).toEqual([false, false, true]);
    expect(parts.slice(0, -1).every((p) => p.items.length >= 500)).toBe(true);
    expect(parts.reduce((n, p) => n + p.items.length, 0)).toBe(1_203);
  });

  it('a body that writes its metadata after its items is handed on whole, since its resourceVersion is not known before', async () => {
    const { lw, gate } = unpagedSource(700, true);
    gate.open();
    const parts: ListPortion<Pod>[] = [];
    for await (const p of listPortions(lw, { limit: 0 }, new AbortController().signal, { pageSize: 0 })) parts.push(p);
    expect(shape(parts)).toEqual([[700, true]]);
    expect(parts[0]?.metadata.resourceVersion).toBe('7');
  });

  it('ending the iteration between parts cancels the answer being read', async () => {
    const { lw, gate } = unpagedSource(1_100);
    for await (const p of listPortions(lw, { limit: 100 }, new AbortController().signal, { pageSize: 100 })) {
      expect(p.complete).toBe(false);
      break;
    }
    await waitFor(() => gate.aborted(), 'the answer being read to be cancelled');
  });

  it('pages of the size asked for come whole, one part each, from the simulator', async () => {
    server = await startApiServer({ bookmarkIntervalMs: 60_000 });
    for (let i = 0; i < 25; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: 'default' } });
    const parts: ListPortion<Pod>[] = [];
    for await (const p of listPortions(kubeSource<Pod>(server.kubeConfig(), PODS), {}, new AbortController().signal, { pageSize: 10 })) parts.push(p);
    expect(shape(parts)).toEqual([
      [10, true],
      [10, true],
      [5, true],
    ]);
  });

  it("an informer stores the first parts of an unpaged list before the list's last bytes are in, and syncs once they are", async () => {
    const { lw, gate } = unpagedSource(1_100);
    const inf = informer<Pod>(lw as ListerWatcher<Pod & { metadata: { name: string } }>);
    const sub = inf.subscribe();
    try {
      await waitFor(() => inf.store.list().length >= 101, 'the first part to be stored');
      expect(gate.aborted()).toBe(false);
      expect(inf.status().synced).toBe(false);
      gate.open();
      await inf.whenSynced({ timeout: 30_000 });
      expect(inf.store.list()).toHaveLength(1_100);
    } finally {
      sub.unsubscribe();
    }
  });
});
