// The informer applies a list page by page (S-37): each page reaches the store and the handlers while the next
// is still on its way, and a relist infers deletions only once the whole list is in.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher, ListOptions, ObjectList } from '../../src/sources/types.js';
import { unwrapTombstone } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

let server: ApiServer;
const running = new Lifetimes();

/** The real source, whose LIST requests wait at `gate` from the `blockFrom`-th one on while the gate is closed. */
function gatedSource(blockFrom: number) {
  const inner = kubeSource(server.kubeConfig(), 'v1/pods') as ListerWatcher<KubeObject>;
  let gate = deferred<void>();
  let lists = 0;
  let blocking = true;
  const lw: ListerWatcher<KubeObject> = {
    async list(opts: ListOptions, signal: AbortSignal): Promise<ObjectList<KubeObject>> {
      lists++;
      if (blocking && lists >= blockFrom) await gate.promise;
      return inner.list(opts, signal);
    },
    watch: (opts, signal) => inner.watch(opts, signal),
  };
  return {
    lw,
    lists: () => lists,
    open: () => {
      blocking = false;
      gate.resolve();
    },
    close: (from: number) => {
      gate = deferred<void>();
      blocking = true;
      blockFrom = from;
    },
  };
}

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  await running.end();
  await server.close();
});

describe('an informer applies each LIST page as it arrives', () => {
  it('the first pages are in the store and the handlers while the next is still held back', async () => {
    for (let i = 0; i < 25; i++) await server.create('v1/pods', pod(`p${String(i).padStart(2, '0')}`));
    const source = gatedSource(3);
    const inf = informer(source.lw, { reflector: { pageSize: 10 } });
    running.track(inf);
    const seen: { obj: KubeObject; isInInitialList: boolean }[] = [];
    inf.addHandler({ add: (obj, isInInitialList) => void seen.push({ obj, isInInitialList }) });
    // Page 2 was fetched before page 1 went downstream; page 3's request waits at the gate.
    await waitFor(() => inf.store.size === 20 && seen.length === 20, 'two pages applied');
    expect(source.lists()).toBe(3);
    expect(inf.status().synced).toBe(false);
    expect(seen.every((e) => e.isInInitialList)).toBe(true);
    source.open();
    await inf.whenSynced({ timeout: 10_000 });
    expect(inf.store.size).toBe(25);
    expect(seen).toHaveLength(25);
  });

  it('a relist replaces objects page by page and deletes what the list lacks only once it is complete', async () => {
    for (let i = 0; i < 30; i++) await server.create('v1/pods', pod(`p${String(i).padStart(2, '0')}`));
    const source = gatedSource(Number.POSITIVE_INFINITY);
    const inf = informer(source.lw, { reflector: { pageSize: 10, backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } } });
    running.track(inf);
    const deletes: string[] = [];
    inf.addHandler({ delete: (obj) => void deletes.push(unwrapTombstone(obj)?.metadata?.name ?? '') });
    await inf.whenSynced({ timeout: 10_000 });
    await waitFor(() => server.stats.watchesOpen === 1, 'the watch');
    const listed = (name: string) => inf.store.getByKey(`default/${name}`);
    const before = { p05: listed('p05'), p15: listed('p15'), p25: listed('p25') };

    // The watch expires as p29 goes away, unseen; the relist at the last resourceVersion is refused as expired, so
    // it lists afresh (without p29), and its third page waits at the gate.
    const listsBefore = source.lists();
    source.close(listsBefore + 4);
    server.faults.inject({ type: 'status', status: 410 }, { verb: 'list', times: 1 });
    server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', times: 1 });
    await server.delete('v1/pods', 'default', 'p29');
    await waitFor(() => source.lists() === listsBefore + 4, 'the relist to reach its third page');
    // The first two pages replaced their objects (newly decoded copies); the third page's are untouched.
    await waitFor(() => listed('p05') !== before.p05 && listed('p15') !== before.p15, 'two relisted pages applied');
    expect(listed('p25')).toBe(before.p25);
    expect(deletes).toEqual([]);
    expect(listed('p29')).toBeDefined();
    source.open();
    await waitFor(() => deletes.length === 1, 'the delete inferred at the end of the list');
    expect(deletes).toEqual(['p29']);
    expect(inf.store.size).toBe(29);
    expect(listed('p25')).not.toBe(before.p25);
  });

});
