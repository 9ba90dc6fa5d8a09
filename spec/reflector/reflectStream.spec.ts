import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reflect, type ReflectOptions, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorEvent } from '../../src/reflector/types.js';
import { ConnectionError, KubeApiError } from '../../src/errors/api/index.js';
import { advance, bookmark, pod, ScriptedLW, type Pod, type WatchChannel } from './reflectScripted.js';

const END = { 'k8s.io/initial-events-end': 'true' };


function run(lw: ScriptedLW, opts: ReflectOptions = {}) {
  const events: ReflectorEvent<Pod>[] = [];
  const statuses: ReflectorStatus[] = [];
  const result: { error?: unknown } = {};
  const sub = reflect(lw, { random: () => 0, initialList: 'stream', ...opts, status: (s) => statuses.push(s) }).subscribe({
    next: (e) => events.push(e),
    error: (e: unknown) => (result.error = e),
  });
  return { events, statuses, sub, result, types: () => events.map((e) => e.type) };
}

const initialState = (w: WatchChannel) =>
  w.push({ type: 'ADDED', object: pod('a', 5) }, { type: 'ADDED', object: pod('b', 7) }, bookmark(10, END));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("reflect() with initialList: 'stream'", () => {
  it('collects the initial ADDED events into one Replace at the end bookmark and carries on with the same stream', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push(initialState);
    const r = run(lw);
    await advance();
    expect(lw.lists).toHaveLength(0);
    expect(lw.watches).toHaveLength(1);
    const opts = lw.watching.opts;
    expect(opts).toMatchObject({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
    expect(opts.resourceVersion).toBeUndefined();
    expect(r.events).toEqual([{ type: 'Replace', items: [pod('a', 5), pod('b', 7)], resourceVersion: '10' }]);
    lw.watching.push({ type: 'MODIFIED', object: pod('a', 11) });
    await advance();
    expect(r.events.at(-1)).toEqual({ type: 'Modified', obj: pod('a', 11), resourceVersion: '11' });
    expect(lw.watches).toHaveLength(1);
    expect(r.statuses.find((s) => s.state === 'listing')).toMatchObject({ mode: 'stream' });
    lw.watching.end();
    await advance();
    expect(lw.watches.at(-1)?.opts).toMatchObject({ resourceVersion: '11' });
    expect(lw.watches.at(-1)?.opts.sendInitialEvents).toBeUndefined();
    r.sub.unsubscribe();
  });

  it('applies MODIFIED/DELETED during the initial phase and ignores bookmarks without the end annotation', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) =>
      w.push(
        { type: 'ADDED', object: pod('a', 5) },
        { type: 'ADDED', object: pod('b', 6) },
        bookmark(8, { 'k8s.io/initial-events-end': 'false' }),
        { type: 'MODIFIED', object: pod('a', 9) },
        { type: 'DELETED', object: pod('b', 10) },
      ),
    );
    const r = run(lw);
    await advance();
    expect(r.events).toEqual([]);
    lw.watching.push(bookmark(12, END));
    await advance();
    expect(r.events).toEqual([{ type: 'Replace', items: [pod('a', 9)], resourceVersion: '12' }]);
    r.sub.unsubscribe();
  });

  it('falls back to a paged list for good when the server rejects the streaming list (400)', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(400, 'sendInitialEvents is not supported', { reason: 'BadRequest' })));
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    const r = run(lw);
    await advance();
    // Not final: a 400 to the streaming request only says the server lacks the feature.
    expect(r.result.error).toBeUndefined();
    expect(lw.lists.length).toBeGreaterThanOrEqual(1);
    expect(r.types()[0]).toBe('Replace');
    expect(lw.watches[1]?.opts.sendInitialEvents).toBeUndefined();
    // The plain watch's 410 relists at once, and the relist is paged again.
    expect(lw.lists).toHaveLength(2);
    expect(lw.watches.filter((w) => w.opts.sendInitialEvents === true)).toHaveLength(1);
    r.sub.unsubscribe();
  });

  it('uses paged lists when the ListerWatcher says it cannot stream', async () => {
    const lw = new ScriptedLW({ supportsWatchList: false });
    const r = run(lw);
    await advance();
    expect(lw.lists).toHaveLength(1);
    expect(lw.watches.every((w) => w.opts.sendInitialEvents === undefined)).toBe(true);
    expect(r.statuses.find((s) => s.state === 'listing')).toMatchObject({ mode: 'paged' });
    r.sub.unsubscribe();
  });

  it('falls back to a paged list for this cycle only when the stream closes at once without events', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.end());
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.watchScripts.push(initialState);
    const r = run(lw);
    await advance();
    expect(lw.lists).toHaveLength(1);
    await advance(800);
    expect(lw.watches.at(-1)?.opts.sendInitialEvents).toBe(true);
    expect(r.types()).toEqual(['Replace', 'Replace']);
    r.sub.unsubscribe();
  });

  it('backs off and streams again on a transient failure', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(503, 'etcd timeout')));
    lw.watchScripts.push((w) => w.fail(new ConnectionError('refused', { code: 'ECONNREFUSED' })));
    lw.watchScripts.push(initialState);
    const r = run(lw);
    await advance(800 + 1600);
    expect(lw.lists).toHaveLength(0);
    expect(lw.watches.map((w) => w.opts.sendInitialEvents)).toEqual([true, true, true]);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('retries the streaming list after a 403 instead of falling back (the paged list would be forbidden too)', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(403, 'pods is forbidden')));
    lw.watchScripts.push(initialState);
    const r = run(lw);
    await advance();
    expect(r.statuses.filter((s) => s.state === 'error')).toHaveLength(1);
    expect(r.statuses.at(-1)).toMatchObject({ state: 'backoff', delayMs: 800 });
    await advance(800);
    expect(lw.lists).toHaveLength(0);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('streams again at once from "" when its resourceVersion has expired', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push(initialState);
    const r = run(lw);
    await advance();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.watchScripts.push((w) => w.push({ type: 'ADDED', object: pod('c', 40) }, bookmark(41, END)));
    lw.watching.fail(new KubeApiError(410, 'compacted'));
    await advance(800);
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual([undefined, '10', undefined]);
    expect(r.events.at(-1)).toEqual({ type: 'Replace', items: [pod('c', 40)], resourceVersion: '41' });
    r.sub.unsubscribe();
  });

  it('aborts the streaming list when unsubscribed before the end bookmark', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.push({ type: 'ADDED', object: pod('a', 5) }));
    const r = run(lw, { resyncPeriod: 1000 });
    await advance();
    r.sub.unsubscribe();
    expect(lw.watching.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(r.events).toEqual([]);
  });
});
