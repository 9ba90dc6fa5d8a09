// reflect({ listDelivery: 'pages' }) over HTTP against the simulator: a list reaches the stream page by page as it
// downloads, with the next page already requested, and a list that fails part-way never goes back in time.
import type { Subscription } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reflect, type ReflectOptions, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { kubeSource } from '../../src/sources/index.js';
import type { ListerWatcher, ListOptions, ObjectList } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

interface Pod {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

const PODS = 'v1/pods';
const NS = 'default';
const fast = { initialMs: 20, maxMs: 200, factor: 2, jitter: 0.5, resetAfterMs: 120_000 };

let server: ApiServer;
const running: Subscription[] = [];

/** The real HTTP source, with a record of every LIST request and a hook run before each one is sent. */
function recordingSource(before?: (call: number, opts: ListOptions) => void | Promise<void>) {
  const inner = kubeSource(server.kubeConfig(), PODS, { namespace: NS }) as unknown as ListerWatcher<Pod>;
  const lists: ListOptions[] = [];
  const lw: ListerWatcher<Pod> = {
    async list(opts: ListOptions, signal: AbortSignal): Promise<ObjectList<Pod>> {
      lists.push(opts);
      await before?.(lists.length, opts);
      return inner.list(opts, signal);
    },
    watch: (opts, signal) => inner.watch(opts, signal),
  };
  return { lw, lists };
}

function run(lw: ListerWatcher<Pod>, opts: ReflectOptions, onEvent?: (e: ReflectorEvent<Pod>) => void) {
  const events: ReflectorEvent<Pod>[] = [];
  const statuses: ReflectorStatus[] = [];
  const sub = reflect(lw, { backoff: fast, listDelivery: 'pages', ...opts, status: (s) => statuses.push(s) }).subscribe((e) => {
    events.push(e);
    onEvent?.(e);
  });
  running.push(sub);
  return { events, statuses, watching: () => statuses.at(-1)?.state === 'watching' };
}

const names = (events: readonly ReflectorEvent<Pod>[]): string[] =>
  events.flatMap((e) => (e.type === 'ReplacePage' ? e.items.map((p) => p.metadata.name) : []));

const shape = (events: readonly ReflectorEvent<Pod>[]): string[] =>
  events.map((e) => (e.type === 'ReplacePage' ? `page ${e.items.length}${e.first ? ' first' : ''}` : e.type === 'ReplaceEnd' ? 'end' : e.type));

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.faults.clear();
  for (const p of server.list(PODS, NS) as Pod[]) await server.delete(PODS, NS, p.metadata.name);
});
afterEach(() => {
  for (const sub of running.splice(0)) sub.unsubscribe();
  server.faults.clear();
});

describe("reflect({ listDelivery: 'pages' }) against the simulator", () => {
  it('emits each page as it arrives, then ReplaceEnd with the list resourceVersion, then the watch', async () => {
    for (let i = 0; i < 25; i++) await server.create(PODS, { metadata: { name: `p${String(i).padStart(2, '0')}`, namespace: NS } });
    const { lw } = recordingSource();
    const r = run(lw, { pageSize: 10 });
    await waitFor(r.watching, 'watching');
    expect(shape(r.events)).toEqual(['page 10 first', 'page 10', 'page 5', 'end']);
    expect(names(r.events)).toEqual((server.list(PODS, NS) as Pod[]).map((p) => p.metadata.name));
    const end = r.events[3] as Extract<ReflectorEvent<Pod>, { type: 'ReplaceEnd' }>;
    const watching = r.statuses.find((s) => s.state === 'watching') as { resourceVersion: string };
    expect(end.resourceVersion).toBe(watching.resourceVersion);
    await server.create(PODS, { metadata: { name: 'late', namespace: NS } });
    await waitFor(() => r.events.some((e) => e.type === 'Added' && e.obj.metadata.name === 'late'), 'the watch event');
  });

  it('has requested the next page when a page is emitted, so the server works while the consumer applies it', async () => {
    for (let i = 0; i < 30; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: NS } });
    const { lw, lists } = recordingSource();
    const requestedAtEmission: number[] = [];
    const r = run(lw, { pageSize: 10 }, (e) => {
      if (e.type === 'ReplacePage') requestedAtEmission.push(lists.length);
    });
    await waitFor(r.watching, 'watching');
    // Page n is emitted with page n + 1 already asked for; the last page has nothing after it.
    expect(requestedAtEmission).toEqual([2, 3, 3]);
  });

  it('the stripManagedFields hint goes with every page request; later pages carry the token, not the resourceVersion', async () => {
    for (let i = 0; i < 25; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: NS } });
    const { lw, lists } = recordingSource();
    const r = run(lw, { pageSize: 10, stripManagedFields: true });
    await waitFor(r.watching, 'watching');
    expect(lists).toHaveLength(3);
    expect(lists[0]).toEqual({ resourceVersion: '0', limit: 10, stripManagedFields: true });
    for (const later of lists.slice(1)) expect(later).toEqual({ limit: 10, stripManagedFields: true, continue: expect.any(String) });
  });

  it('an empty list is one empty first page and its end', async () => {
    const { lw } = recordingSource();
    const r = run(lw, {});
    await waitFor(r.watching, 'watching');
    expect(shape(r.events)).toEqual(['page 0 first', 'end']);
  });

  it('a list that fails part-way sends no ReplaceEnd, and the next list is not older than the pages that went out', async () => {
    for (let i = 0; i < 25; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: NS } });
    const { lw, lists } = recordingSource(async (call) => {
      // The second page of the first list fails; by then objects changed on the server.
      if (call === 2) {
        await server.create(PODS, { metadata: { name: 'during', namespace: NS } });
        server.faults.inject({ type: 'status', status: 500 }, { verb: 'list', times: 1 });
      }
    });
    const r = run(lw, { pageSize: 10 });
    await waitFor(r.watching, 'watching');
    expect(lists[0]).toEqual({ resourceVersion: '0', limit: 10 });
    // The failed attempt's page, then the retry's pages (a list at a resourceVersion may or may not show 'during').
    expect(shape(r.events).slice(0, 3)).toEqual(['page 10 first', 'page 10 first', 'page 10']);
    expect(shape(r.events)[4]).toBe('end');
    // The retry asked for the first attempt's snapshot (not "0", which may be served older from a cache).
    const retry = lists[2] as ListOptions;
    expect(retry.resourceVersion).toMatch(/^\d+$/);
    expect(retry.resourceVersion).not.toBe('0');
    await waitFor(() => names(r.events.slice(1)).includes('during') || r.events.some((e) => e.type === 'Added' && e.obj.metadata.name === 'during'), "'during' listed or watched");
    // Once a list completed, relists follow the usual rules again: after a watch's 410, the last synced
    // resourceVersion, which the watch moved past the failed attempt's snapshot.
    const before = lists.length;
    server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', times: 1 });
    await server.create(PODS, { metadata: { name: 'trigger', namespace: NS } });
    await waitFor(() => lists.length > before && r.watching(), 'the relist');
    expect(Number(lists[before]?.resourceVersion)).toBeGreaterThan(Number(retry.resourceVersion));
  });

  it('a continue token that expired starts the list over with a first page, and only the final list counts', async () => {
    for (let i = 0; i < 6; i++) await server.create(PODS, { metadata: { name: `p${i}`, namespace: NS } });
    const { lw } = recordingSource(async (call) => {
      if (call === 2) {
        await server.delete(PODS, NS, 'p0');
        server.compact();
        await server.create(PODS, { metadata: { name: 'later', namespace: NS } });
      }
    });
    const r = run(lw, { pageSize: 2 });
    await waitFor(r.watching, 'watching');
    const firsts = r.events.flatMap((e, i) => (e.type === 'ReplacePage' && e.first ? [i] : []));
    expect(firsts).toHaveLength(2);
    // What the stream says after the last first page is exactly the server's state.
    const final = names(r.events.slice(firsts[1]));
    expect(final.sort()).toEqual(['later', 'p1', 'p2', 'p3', 'p4', 'p5']);
    expect(shape(r.events.slice(firsts[1])).at(-1)).toBe('end');
  });

  it('rejects an unknown listDelivery at once', () => {
    const { lw } = recordingSource();
    expect(() => reflect(lw, { listDelivery: 'page' as never })).toThrow(/option "listDelivery" must be one of "whole", "pages", got "page"/);
  });
});
