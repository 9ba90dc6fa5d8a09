// reflect()'s retry policy by kind of fault, under fake time with a scripted ListerWatcher.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reflect } from '../../src/reflector/index.js';
import {
  ConnectionError,
  DecodeError,
  KubeApiError,
} from '../../src/errors/api/index.js';
import { advance, bookmark, clientGoBase, fastRetryBase, maxRetriesWithin, pod, runReflect, ScriptedLW } from './reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('reflect() retries a fault the next request fixes at once', () => {
  it('a watch that closes early, then a 410 on the re-watch, then the relist: three jitters, no growing backoff', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { random: () => 0.5 });
    await advance();
    const start = Date.now();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.watching.push({ type: 'MODIFIED', object: pod('a', 11) }).end();
    // 25 ms (half of the 50 ms jitter) for the early close, 25 ms for the 410, then the relist and a healthy watch.
    await advance(25);
    expect(lw.watches).toHaveLength(2);
    expect(lw.lists).toHaveLength(1);
    await advance(25);
    expect(lw.lists).toHaveLength(2);
    expect(lw.lists[1]?.opts.resourceVersion).toBe('11');
    expect(r.types()).toEqual(['Replace', 'Modified', 'Replace']);
    expect(r.of('backoff').map((b) => [b.kind, b.delayMs])).toEqual([
      ['watch-closed', 25],
      ['expired', 25],
    ]);
    // Measured (virtual time): the cache is current again 50 ms after the watch closed.
    expect(Date.now() - start).toBe(50);
    r.sub.unsubscribe();
  });

  it('an unparseable line, then a 410 on the resume: resumed and relisted without waiting', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.watching.push({ type: 'ADDED', object: pod('b', 11) });
    lw.watching.fail(new DecodeError('Unexpected token', '{"type":"MODIF', 1234));
    await advance();
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '11', '10']);
    expect(lw.lists.map((l) => l.opts.resourceVersion)).toEqual(['0', '11']);
    expect(r.of('backoff').map((b) => [b.kind, b.delayMs])).toEqual([
      ['decode', 0],
      ['expired', 0],
    ]);
    r.sub.unsubscribe();
  });

  it('grows the backoff of a kind only while that kind repeats, and the health backoff apart from it', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    for (let i = 0; i < 3; i++) lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.watching.fail(new KubeApiError(410, 'too old'));
    await advance(800 + 1600 + 3200);
    expect(r.of('backoff').map((b) => [b.kind, b.delayMs])).toEqual([
      ['expired', 0],
      ['expired', 800],
      ['expired', 1600],
      ['expired', 3200],
    ]);
    // A 500 now starts client-go's schedule at its beginning, and a stall is immediate: each kind has its own.
    lw.watchScripts.push((w) => w.fail(new ConnectionError('idle', { code: 'IDLE_TIMEOUT' })));
    lw.watching.fail(new KubeApiError(500, 'boom'));
    await advance(800);
    expect(r.of('backoff').slice(4).map((b) => [b.kind, b.delayMs])).toEqual([
      ['server', 800],
      ['stalled', 0],
    ]);
    r.sub.unsubscribe();
  });

  it('starts a kind over once a watch has stayed healthy for 5 s (HI-52)', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.watching.fail(new KubeApiError(410, 'too old'));
    await advance(800);
    expect(r.delays()).toEqual([0, 800]);
    await advance(5_000);
    lw.watching.fail(new KubeApiError(410, 'too old'));
    await advance();
    expect(r.delays()).toEqual([0, 800, 0]);
    r.sub.unsubscribe();
  });

  it('retries a streaming list cut before its end bookmark as a streaming list, at once', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => {
      w.push({ type: 'ADDED', object: pod('a', 5) });
      w.end();
    });
    lw.watchScripts.push((w) => w.push({ type: 'ADDED', object: pod('a', 5) }, bookmark(10, { 'k8s.io/initial-events-end': 'true' })));
    const r = runReflect(lw, { initialList: 'stream' });
    await advance();
    expect(lw.lists).toHaveLength(0);
    expect(lw.watches.map((w) => w.opts.sendInitialEvents)).toEqual([true, true]);
    expect(r.of('backoff')).toMatchObject([{ kind: 'initial-events-incomplete', delayMs: 0 }]);
    expect(r.events).toEqual([{ type: 'Replace', items: [pod('a', 5)], resourceVersion: '10' }]);
    r.sub.unsubscribe();
  });
});

describe('reflect() keeps client-go schedule for the server health', () => {
  it.each([
    ['503', () => new KubeApiError(503, 'down')],
    ['refused', () => new ConnectionError('refused', { code: 'ECONNREFUSED' })],
    ['429 without Retry-After', () => new KubeApiError(429, 'slow down')],
    ['401', () => new KubeApiError(401, 'token expired')],
    ['403', () => new KubeApiError(403, 'rbac')],
    ['404', () => new KubeApiError(404, 'no such resource')],
  ])('%s: 800 ms, 1.6 s, 3.2 s … and reported each time', async (_name, make) => {
    const lw = new ScriptedLW();
    for (let i = 0; i < 4; i++) lw.listAnswers.push(make());
    const r = runReflect(lw);
    await advance(800 + 1600 + 3200 + 6400);
    expect(r.delays()).toEqual([800, 1600, 3200, 6400]);
    expect(r.of('error')).toHaveLength(4);
    expect(r.types()).toEqual(['Replace']);
    expect(r.result.error).toBeUndefined();
    r.sub.unsubscribe();
  });

  it('429 with Retry-After waits exactly that, without jitter', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(429, 'slow down', { retryAfterSeconds: 3 }));
    const r = runReflect(lw, { random: () => 0.9 });
    await advance(2999);
    expect(lw.lists).toHaveLength(1);
    await advance(1);
    expect(lw.lists).toHaveLength(2);
    expect(r.of('backoff')).toMatchObject([{ kind: 'throttled', delayMs: 3000 }]);
    r.sub.unsubscribe();
  });
});

describe('reflect() does not hammer a server that keeps failing', () => {
  const windowMs = 10 * 60_000;

  it('answering 410 to every watch: at most two requests per retry of the expired schedule', async () => {
    const lw = new ScriptedLW();
    const watch = lw.watch.bind(lw);
    lw.watch = (opts, signal) => {
      lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
      return watch(opts, signal);
    };
    const r = runReflect(lw, { random: () => 0 });
    await advance(windowMs);
    const retries = maxRetriesWithin(windowMs, fastRetryBase);
    // A list and a watch per cycle, the first cycle included.
    expect(lw.lists.length + lw.watches.length).toBeLessThanOrEqual(2 * (retries + 1));
    expect(lw.lists.length).toBeGreaterThan(retries - 2);
    expect(Math.max(...r.delays())).toBe(30_000);
    r.sub.unsubscribe();
  });

  it('answering 500 to every list: no more lists than client-go schedule allows', async () => {
    const lw = new ScriptedLW();
    lw.defaultList = undefined as never;
    const list = lw.list.bind(lw);
    lw.list = (opts, signal) => {
      lw.listAnswers.push(new KubeApiError(500, 'boom'));
      return list(opts, signal);
    };
    const r = runReflect(lw, { random: () => 0 });
    await advance(windowMs);
    const retries = maxRetriesWithin(windowMs, clientGoBase);
    expect(lw.lists.length).toBeLessThanOrEqual(retries + 1);
    expect(lw.lists.length).toBeGreaterThanOrEqual(retries);
    expect(r.types()).toEqual([]);
    r.sub.unsubscribe();
  });

  it.each([
    ['with no event (a very short watch, which relists)', false],
    ['after one event', true],
  ])('closing every watch at once %s: bounded by the schedule of that kind', async (_name, withEvent) => {
    const lw = new ScriptedLW();
    const watch = lw.watch.bind(lw);
    let rv = 10;
    lw.watch = (opts, signal) => {
      lw.watchScripts.push((w) => {
        if (withEvent) w.push({ type: 'MODIFIED', object: pod('a', ++rv) });
        w.end();
      });
      return watch(opts, signal);
    };
    const r = runReflect(lw, { random: () => 0 });
    await advance(windowMs);
    const retries = maxRetriesWithin(windowMs, fastRetryBase);
    const perCycle = withEvent ? 1 : 2;
    expect(lw.lists.length + lw.watches.length).toBeLessThanOrEqual(perCycle * (retries + 1) + 1);
    expect(lw.watches.length).toBeGreaterThan(retries - 2);
    expect(r.of('backoff').every((b) => b.kind === (withEvent ? 'watch-closed' : 'very-short-watch'))).toBe(true);
    r.sub.unsubscribe();
  });
});

describe('reflect() fails fast where nothing can heal', () => {
  it.each([
    ['400 to the LIST', 'list', 400],
    ['422 to the LIST', 'list', 422],
    ['400 to the WATCH', 'watch', 400],
    ['422 to the WATCH', 'watch', 422],
  ])('%s ends the observable with that error and releases everything', async (_name, where, status) => {
    const lw = new ScriptedLW();
    const error = new KubeApiError(status, 'bad selector', { reason: status === 400 ? 'BadRequest' : 'Invalid' });
    if (where === 'list') lw.listAnswers.push(error);
    else lw.watchScripts.push((w) => w.fail(error));
    const r = runReflect(lw, { resyncPeriod: 1000 });
    await advance();
    expect(r.result.error).toBe(error);
    expect(r.of('error')).toMatchObject([{ error, terminal: true }]);
    expect(vi.getTimerCount()).toBe(0);
    await advance(60_000);
    expect(lw.lists.length + lw.watches.length).toBe(where === 'list' ? 1 : 2);
  });

  it('onTerminal replaces the default: returning false keeps retrying a 400', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(400, 'bad', { reason: 'BadRequest' }));
    const r = runReflect(lw, { onTerminal: () => false });
    await advance(800);
    expect(r.result.error).toBeUndefined();
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('a 400 to the streaming-list request still falls back to paged lists', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(400, 'sendInitialEvents unsupported', { reason: 'BadRequest' })));
    const r = runReflect(lw, { initialList: 'stream' });
    await advance();
    expect(r.result.error).toBeUndefined();
    expect(r.of('error')).toMatchObject([{ terminal: false }]);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });
});

describe('reflect() without a status sink', () => {
  it('writes every error to the process reporter on stderr', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(503, 'etcd is down'));
    const sub = reflect(lw, { random: () => 0 }).subscribe();
    await advance(800);
    expect(lines.some((l) => l.includes('KubeApiError') && l.includes('etcd is down'))).toBe(true);
    sub.unsubscribe();
  });
});
