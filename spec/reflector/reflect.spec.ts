import { take, VirtualTimeScheduler } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { probedReflect } from '../../src/reflector/reflect.js';
import { reflect, VeryShortWatchError, type ReflectOptions } from '../../src/reflector/index.js';
import type { ReflectorEvent, ReflectorProbe } from '../../src/reflector/types.js';
import {
  ConnectionError,
  DecodeError,
  isForbidden,
  isServerError,
  KubeApiError,
} from '../../src/errors/api/index.js';
import { advance, bookmark, pod, runReflect, ScriptedLW, type Pod } from './reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('reflect() options', () => {
  const lw = new ScriptedLW();
  it.each([
    ['resyncPeriod', { resyncPeriod: -1 }],
    ['resyncPeriod', { resyncPeriod: Number.NaN }],
    ['initialList', { initialList: 'pages' }],
    ['pageSize', { pageSize: 1.5 }],
    ['pageSize', { pageSize: -5 }],
    ['minWatchTimeoutSeconds', { minWatchTimeoutSeconds: 0 }],
    ['backoff.initialMs', { backoff: { initialMs: 0 } }],
    ['backoff.factor', { backoff: { factor: 0.5 } }],
    ['backoff.maxMs', { backoff: { initialMs: 100, maxMs: 50 } }],
    ['backoff.jitter', { backoff: { jitter: -1 } }],
    ['backoff', { backoff: 5 }],
    ['scheduler', { scheduler: {} }],
    ['onTerminal', { onTerminal: 'yes' }],
    ['random', { random: 4 }],
    ['status', { status: 42 }],
  ])('rejects a bad %s up front with a TypeError naming it', (name, opts) => {
    expect(() => reflect(lw, opts as ReflectOptions)).toThrow(TypeError);
    expect(() => reflect(lw, opts as ReflectOptions)).toThrow(name);
    expect(lw.lists).toHaveLength(0);
  });

  it('rejects something that is not a ListerWatcher', () => {
    expect(() => reflect({} as ScriptedLW)).toThrow(/lw must be a ListerWatcher/);
  });

  it('is cold: nothing is requested before subscribe', async () => {
    const cold = new ScriptedLW();
    reflect(cold);
    await advance(10_000);
    expect(cold.lists).toHaveLength(0);
  });
});

describe('reflect() list and watch', () => {
  it('lists page by page from RV "0", emits one Replace, then watches from the list RV', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(
      { metadata: { resourceVersion: '10', continue: 'c1' }, items: [pod('a', 1), pod('b', 2)] },
      { metadata: { resourceVersion: '10', continue: 'c2' }, items: [pod('c', 3)] },
      { metadata: { resourceVersion: '10' }, items: [pod('d', 4)] },
    );
    const r = runReflect(lw, { pageSize: 2 });
    await advance();
    expect(lw.lists.map((l) => l.opts)).toEqual([
      { resourceVersion: '0', limit: 2 },
      { limit: 2, continue: 'c1' },
      { limit: 2, continue: 'c2' },
    ]);
    expect(r.events).toEqual([
      { type: 'Replace', items: [pod('a', 1), pod('b', 2), pod('c', 3), pod('d', 4)], resourceVersion: '10' },
    ]);
    expect(lw.watches).toHaveLength(1);
    const w = lw.watching.opts;
    expect(w.resourceVersion).toBe('10');
    expect(w.allowWatchBookmarks).toBe(true);
    expect(w.sendInitialEvents).toBeUndefined();
    expect(r.of('watching').at(-1)?.resourceVersion).toBe('10');
    r.sub.unsubscribe();
  });

  it('picks each watch timeout at random in [min, 2·min) seconds', async () => {
    const lw = new ScriptedLW();
    const randoms = [0, 0.5, 0.9999999];
    let i = 0;
    const r = runReflect(lw, { minWatchTimeoutSeconds: 300, random: () => randoms[i++ % randoms.length]! });
    await advance();
    for (let n = 0; n < 3; n++) {
      // Each watch lives 30 s, long enough for its end to be routine: no jitter draws on the random source.
      await advance(30_000);
      lw.watching.push(bookmark(20 + n)).end();
      await advance();
    }
    const timeouts = lw.watches.map((w) => w.opts.timeoutSeconds);
    expect(timeouts).toEqual([300, 450, 599, 300]);
    r.sub.unsubscribe();
  });

  it('emits watch events with their resourceVersion and re-watches from the last bookmark without relisting', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push(
      { type: 'ADDED', object: pod('b', 11) },
      { type: 'MODIFIED', object: pod('a', 12, 1) },
      { type: 'DELETED', object: pod('b', 13) },
      bookmark(20),
    );
    await advance();
    expect(r.events.slice(1)).toEqual([
      { type: 'Added', obj: pod('b', 11), resourceVersion: '11' },
      { type: 'Modified', obj: pod('a', 12, 1), resourceVersion: '12' },
      { type: 'Deleted', obj: pod('b', 13), resourceVersion: '13' },
      { type: 'Bookmark', resourceVersion: '20' },
    ]);
    lw.watching.end();
    await advance();
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '20']);
    expect(lw.lists).toHaveLength(1);
    expect(r.delays()).toEqual([]);
    expect(r.last()).toMatchObject({ state: 'watching', resourceVersion: '20', counters: { lists: 1, watches: 2, relists: 0, events: 4 } });
    r.sub.unsubscribe();
  });

  it('re-watches at once when the source reports an idle timeout', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push(bookmark(15));
    await advance();
    lw.watching.fail(new ConnectionError('watch went silent', { code: 'IDLE_TIMEOUT' }));
    await advance();
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '15']);
    // A stall: the first retry waits only the jitter of an immediate retry (0 with random() = 0).
    expect(r.of('backoff')).toMatchObject([{ delayMs: 0, kind: 'stalled' }]);
    expect(r.of('error')).toHaveLength(1);
    r.sub.unsubscribe();
  });

  it('treats a watch that closes within a second without events as a failure: relist at once, back off if it repeats', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.end(), (w) => w.end());
    const r = runReflect(lw);
    await advance();
    expect(r.of('error')[0]?.error).toBeInstanceOf(VeryShortWatchError);
    expect(r.of('relisting')).toMatchObject([{ reason: 'very-short-watch' }, { reason: 'very-short-watch' }]);
    expect(lw.lists).toHaveLength(2);
    expect(lw.lists[1]?.opts.resourceVersion).toBe('10');
    // The same kind again: now it backs off.
    expect(r.delays()).toEqual([0, 800]);
    await advance(799);
    expect(lw.lists).toHaveLength(2);
    await advance(1);
    expect(lw.lists).toHaveLength(3);
    expect(r.types()).toEqual(['Replace', 'Replace', 'Replace']);
    r.sub.unsubscribe();
  });

  it('re-watches without relisting when a quiet watch ends normally after a second', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => setTimeout(() => w.end(), 1500));
    const r = runReflect(lw);
    await advance(1500);
    expect(lw.watches).toHaveLength(2);
    expect(lw.lists).toHaveLength(1);
    expect(r.of('error')).toHaveLength(0);
    r.sub.unsubscribe();
  });

  it('tracks resourceVersions from ADDED events only once the stream proves it is not a synthetic replay', async () => {
    // A list without a resourceVersion leaves the watch at "": its ADDED events may be synthetic (RF-16).
    const lw = new ScriptedLW();
    lw.defaultList = { metadata: {}, items: [] };
    const r = runReflect(lw);
    await advance();
    expect(lw.watching.opts.resourceVersion).toBeUndefined();
    lw.watching.push({ type: 'ADDED', object: pod('a', 7) }).end();
    await advance();
    expect(lw.watching.opts.resourceVersion).toBeUndefined();
    lw.watching.push({ type: 'MODIFIED', object: pod('a', 8) }, { type: 'ADDED', object: pod('b', 9) }).end();
    // A second early close in a row waits the backoff's first step.
    await advance(800);
    expect(lw.watching.opts.resourceVersion).toBe('9');
    r.sub.unsubscribe();
  });
});

describe('reflect() relists', () => {
  it('relists from the last RV on 410 at watch start, then once from "" when the list is expired too (RF-11)', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'too old')));
    lw.listAnswers.push(
      { metadata: { resourceVersion: '10' }, items: [pod('a', 5)] },
      new KubeApiError(410, 'gone'),
      { metadata: { resourceVersion: '30' }, items: [pod('a', 25)] },
    );
    const r = runReflect(lw);
    await advance();
    expect(r.of('relisting')).toMatchObject([{ reason: 'expired' }]);
    await advance(800);
    expect(lw.lists.map((l) => l.opts)).toEqual([{ resourceVersion: '0', limit: 500 }, { resourceVersion: '10', limit: 0 }, { limit: 500 }]);
    expect(r.events.at(-1)).toEqual({ type: 'Replace', items: [pod('a', 25)], resourceVersion: '30' });
    expect(lw.watching.opts.resourceVersion).toBe('30');
    expect(r.last().counters).toMatchObject({ lists: 2, relists: 1, errors: 2 });
    r.sub.unsubscribe();
  });

  it('relists when an ERROR event (410) arrives mid-stream, after the events before it', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push({ type: 'ADDED', object: pod('b', 11) });
    lw.watching.fail(new KubeApiError(410, 'The resourceVersion for the provided watch is too old.'));
    await advance(800);
    expect(r.types()).toEqual(['Replace', 'Added', 'Replace']);
    expect(lw.lists[1]?.opts.resourceVersion).toBe('11');
    r.sub.unsubscribe();
  });

  it('restarts the list from page one when a continue token expired, and lists unpaged if it expires again', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(
      { metadata: { resourceVersion: '10', continue: 'c1' }, items: [pod('a', 1)] },
      new KubeApiError(410, 'continue token expired'),
      { metadata: { resourceVersion: '12' }, items: [pod('a', 1), pod('b', 11)] },
    );
    const r = runReflect(lw, { pageSize: 1 });
    await advance();
    expect(lw.lists.map((l) => l.opts)).toEqual([{ resourceVersion: '0', limit: 1 }, { limit: 1, continue: 'c1' }, { resourceVersion: '0', limit: 1 }]);
    expect(r.events).toEqual([{ type: 'Replace', items: [pod('a', 1), pod('b', 11)], resourceVersion: '12' }]);
    r.sub.unsubscribe();

    const again = new ScriptedLW();
    again.listAnswers.push(
      { metadata: { resourceVersion: '10', continue: 'c1' }, items: [pod('a', 1)] },
      new KubeApiError(410, 'continue token expired'),
      { metadata: { resourceVersion: '12', continue: 'c2' }, items: [pod('a', 1)] },
      new KubeApiError(410, 'continue token expired again'),
      { metadata: { resourceVersion: '13' }, items: [pod('a', 1), pod('b', 11)] },
    );
    const r2 = runReflect(again, { pageSize: 1 });
    await advance();
    expect(again.lists.map((l) => l.opts)).toEqual([
      { resourceVersion: '0', limit: 1 },
      { limit: 1, continue: 'c1' },
      { resourceVersion: '0', limit: 1 },
      { limit: 1, continue: 'c2' },
      { resourceVersion: '0', limit: 0 },
    ]);
    expect(r2.events).toEqual([{ type: 'Replace', items: [pod('a', 1), pod('b', 11)], resourceVersion: '13' }]);
    r2.sub.unsubscribe();
  });

  it('keeps paging relists once a "0" list came back paginated, and lists unpaged at an exact RV otherwise', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(
      { metadata: { resourceVersion: '10', continue: 'c1' }, items: [pod('a', 1)] },
      { metadata: { resourceVersion: '10' }, items: [pod('b', 2)] },
    );
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'old')));
    const r = runReflect(lw, { pageSize: 1 });
    await advance(800);
    expect(lw.lists[2]?.opts).toEqual({ resourceVersion: '10', limit: 1 });
    r.sub.unsubscribe();

    const unpaged = new ScriptedLW();
    unpaged.watchScripts.push((w) => w.fail(new KubeApiError(410, 'old')));
    const r2 = runReflect(unpaged);
    await advance(800);
    expect(unpaged.lists[1]?.opts).toEqual({ resourceVersion: '10', limit: 0 });
    r2.sub.unsubscribe();
  });

  it('applies a page size the caller chose to every list, a relist at a pinned resourceVersion included', async () => {
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new KubeApiError(410, 'old')));
    const r = runReflect(lw, { pageSize: 100 });
    await advance();
    // The default would list at RV 10 unpaged (limit 0) so the watch cache can serve it; an explicit size wins.
    expect(lw.lists.map((l) => l.opts)).toEqual([
      { resourceVersion: '0', limit: 100 },
      { resourceVersion: '10', limit: 100 },
    ]);
    r.sub.unsubscribe();
  });

  it('retries a list that is "too large resource version" from "" at once', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(504, 'Too large resource version: 99, current: 10', { reason: 'Timeout' }));
    const r = runReflect(lw);
    await advance();
    expect(lw.lists.map((l) => l.opts.resourceVersion)).toEqual(['0', undefined]);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('reports a DecodeError, ends that watch and resumes from the last good RV without relisting', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push({ type: 'ADDED', object: pod('b', 11) });
    lw.watching.fail(new DecodeError('Unexpected token', '{"type":"MODIF', 1234));
    await advance();
    const errors = r.of('error');
    expect(errors[0]?.error).toBeInstanceOf(DecodeError);
    expect(r.last().counters).toMatchObject({ decodeErrors: 1, errors: 1 });
    expect(lw.watches[0]?.signal.aborted).toBe(true);
    await advance(800);
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '11']);
    expect(lw.lists).toHaveLength(1);
    r.sub.unsubscribe();
  });

  it('reports a well-formed but unusable event as a DecodeError, skips it and keeps the same watch', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push({ type: 'ADDED', object: { metadata: { resourceVersion: '11' } } as unknown as Pod });
    lw.watching.push({ type: 'SYNC', object: pod('x', 12) } as never);
    lw.watching.push({ type: 'BOOKMARK', object: {} } as never);
    lw.watching.push({ type: 'ADDED', object: pod('b', 13) });
    await advance();
    const errors = r.of('error').map((s) => s.error);
    expect(errors).toHaveLength(3);
    expect(errors.every((e) => e instanceof DecodeError)).toBe(true);
    // Skipped, not resumed: resuming would replay the same event for ever.
    expect(r.types()).toEqual(['Replace', 'Added']);
    expect(lw.watches).toHaveLength(1);
    expect(r.statuses.at(-1)?.counters.decodeErrors).toBe(3);
    r.sub.unsubscribe();
  });
});

describe('reflect() backoff', () => {
  it('backs off 0.8, 1.6, 3.2 … s capped at 30 s between failing lists', async () => {
    const lw = new ScriptedLW();
    const times: number[] = [];
    const start = Date.now();
    for (let i = 0; i < 10; i++) {
      lw.listAnswers.push(() => {
        times.push(Date.now() - start);
        return new KubeApiError(503, 'etcd is down');
      });
    }
    const r = runReflect(lw);
    await advance();
    const expected = [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000];
    for (const delay of expected) {
      await advance(delay - 1);
      const before = lw.lists.length;
      await advance(1);
      expect(lw.lists.length).toBe(before + 1);
    }
    expect(r.delays()).toEqual([...expected, 30_000]);
    let at = 0;
    expect(times).toEqual([0, ...expected.map((d) => (at += d))]);
    expect(r.result.error).toBeUndefined();
    expect(r.of('error').every((s) => isServerError(s.error))).toBe(true);
    r.sub.unsubscribe();
  });

  it('stretches each delay by jitter within [base, 2·base)', async () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16_807) % 2_147_483_647) - 1) / 2_147_483_646;
    const lw = new ScriptedLW();
    for (let i = 0; i < 12; i++) lw.listAnswers.push(new KubeApiError(500, 'down'));
    const r = runReflect(lw, { random });
    for (let i = 0; i < 12; i++) await advance(60_000);
    const bases = [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000, 30_000, 30_000, 30_000];
    const delays = r.delays();
    expect(delays).toHaveLength(12);
    delays.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(bases[i]!);
      expect(d).toBeLessThan(2 * bases[i]!);
    });
    expect(new Set(delays.map((d, i) => d / bases[i]!)).size).toBeGreaterThan(1);
    r.sub.unsubscribe();
  });

  it.each([
    [4_999, 3200],
    [5_000, 800],
  ])('after a watch of %i ms the next delay is %i ms (a 5 s watch is healthy, HI-52)', async (healthyMs, expected) => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(500, 'down'), new KubeApiError(500, 'down'));
    const r = runReflect(lw);
    await advance(800 + 1600);
    expect(r.types()).toEqual(['Replace']);
    await advance(healthyMs);
    lw.watching.fail(new KubeApiError(500, 'apiserver restarting'));
    await advance();
    expect(r.delays()).toEqual([800, 1600, expected]);
    r.sub.unsubscribe();
  });

  it('honours Retry-After on a 429 and re-watches from the same RV without relisting', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push(bookmark(14));
    lw.watching.fail(new KubeApiError(429, 'slow down', { retryAfterSeconds: 7 }));
    await advance();
    expect(r.delays()).toEqual([7000]);
    await advance(6999);
    expect(lw.watches).toHaveLength(1);
    await advance(1);
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '14']);
    expect(lw.lists).toHaveLength(1);
    r.sub.unsubscribe();
  });

  it('backs off on a 429 without Retry-After and retries a list that was throttled', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(429, 'slow down'));
    const r = runReflect(lw);
    await advance();
    expect(r.delays()).toEqual([800]);
    await advance(800);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('backs off on a connection broken before the watch delivered anything, and re-watches from the last RV', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.fail(new ConnectionError('socket hang up', { code: 'ECONNRESET' }));
    await advance();
    expect(r.delays()).toEqual([800]);
    expect(r.of('backoff')).toMatchObject([{ kind: 'server' }]);
    await advance(800);
    expect(lw.watches.map((w) => w.opts.resourceVersion)).toEqual(['10', '10']);
    expect(lw.lists).toHaveLength(1);
    r.sub.unsubscribe();
  });

  it('retries 401/403 with backoff by default', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(401, 'token expired'), new KubeApiError(403, 'rbac'));
    const r = runReflect(lw);
    await advance(800 + 1600);
    expect(r.types()).toEqual(['Replace']);
    expect(r.result.error).toBeUndefined();
    r.sub.unsubscribe();
  });

  it('errors with the typed error when onTerminal says so, and leaves no timer or request behind', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { onTerminal: (err) => isForbidden(err), resyncPeriod: 1000 });
    await advance();
    lw.watching.fail(new KubeApiError(403, 'pods is forbidden'));
    await advance();
    expect(isForbidden(r.result.error)).toBe(true);
    expect(r.of('error').at(-1)).toMatchObject({ terminal: true });
    expect(lw.watching.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports an onTerminal callback that throws and keeps going', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(500, 'down'));
    const boom = new Error('callback bug');
    const r = runReflect(lw, {
      onTerminal: () => {
        throw boom;
      },
    });
    await advance(800);
    expect(r.of('error').map((s) => s.error)).toContain(boom);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('keeps running when the status sink throws', async () => {
    const lw = new ScriptedLW();
    const events: string[] = [];
    const sub = reflect(lw, {
      status: () => {
        throw new Error('sink bug');
      },
    }).subscribe((e) => events.push(e.type));
    await advance();
    expect(events).toEqual(['Replace']);
    sub.unsubscribe();
  });

  it('runs every timer on the given scheduler', async () => {
    const scheduler = new VirtualTimeScheduler();
    const lw = new ScriptedLW();
    const at: number[] = [];
    for (let i = 0; i < 3; i++) {
      lw.listAnswers.push(() => {
        at.push(scheduler.now());
        return new KubeApiError(500, 'down');
      });
    }
    const r = runReflect(lw, { scheduler, resyncPeriod: 5000 });
    for (let i = 0; i < 3; i++) {
      await advance();
      expect(vi.getTimerCount()).toBe(0);
      scheduler.flush();
    }
    await advance();
    expect(at).toEqual([0, 800, 2400]);
    expect(r.types()).toEqual(['Replace']);
    expect(scheduler.now()).toBe(800 + 1600 + 3200);
    expect(scheduler.actions).toHaveLength(2); // the resync ticker and the open watch's deadline (HI-60)
    expect(vi.getTimerCount()).toBe(0);
    r.sub.unsubscribe();
    expect(scheduler.actions.every((a) => a.closed)).toBe(true);
  });
});

describe('reflect() resync', () => {
  it('emits Resync every period while watching, pauses while relisting and restarts after the list', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { resyncPeriod: 1000 });
    await advance(2500);
    expect(r.types()).toEqual(['Replace', 'Resync', 'Resync']);
    lw.watching.fail(new KubeApiError(500, 'boom'));
    await advance(799);
    expect(r.types().filter((t) => t === 'Resync')).toHaveLength(2);
    await advance(1);
    expect(r.types().at(-1)).toBe('Replace');
    await advance(999);
    expect(r.types().at(-1)).toBe('Replace');
    await advance(1);
    expect(r.types().at(-1)).toBe('Resync');
    r.sub.unsubscribe();
  });

  it('changes its period while running: the ticker restarts at once, and a relist keeps the new period', async () => {
    const lw = new ScriptedLW();
    let probe: ReflectorProbe | undefined;
    const types: string[] = [];
    const sub = probedReflect(lw, { random: () => 0, status: () => {} }, (p) => (probe = p)).subscribe((e) => types.push(e.type));
    await advance(5000);
    expect(types).toEqual(['Replace']);
    probe?.setResyncPeriod(2000);
    await advance(1999);
    expect(types).toEqual(['Replace']);
    await advance(1);
    expect(types).toEqual(['Replace', 'Resync']);
    probe?.setResyncPeriod(1000);
    await advance(1000);
    expect(types.filter((t) => t === 'Resync')).toHaveLength(2);
    lw.watching.fail(new KubeApiError(500, 'boom'));
    // No ticks while the relist waits, then the new period after it.
    await advance(800);
    expect(types.at(-1)).toBe('Replace');
    await advance(999);
    expect(types.at(-1)).toBe('Replace');
    await advance(1);
    expect(types.at(-1)).toBe('Resync');
    probe?.setResyncPeriod(0);
    await advance(60_000);
    expect(types.at(-1)).toBe('Resync');
    expect(() => probe?.setResyncPeriod(-1)).toThrow(TypeError);
    sub.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('emits no Resync when resyncPeriod is 0', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance(3_600_000);
    expect(r.types()).toEqual(['Replace']);
    // The scripted watch never ends by itself, so the only timer is the open watch's deadline (HI-60).
    expect(vi.getTimerCount()).toBe(1);
    r.sub.unsubscribe();
  });
});

describe('reflect() teardown', () => {
  it('aborts a list in flight and leaves no timer', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(() => 'hang');
    const r = runReflect(lw, { resyncPeriod: 1000 });
    await advance();
    expect(lw.lists[0]?.signal.aborted).toBe(false);
    r.sub.unsubscribe();
    expect(lw.lists[0]?.signal.aborted).toBe(true);
    await advance(60_000);
    expect(lw.lists).toHaveLength(1);
    expect(lw.watches).toHaveLength(0);
    expect(r.events).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears a pending backoff timer', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(500, 'down'));
    const r = runReflect(lw);
    await advance();
    expect(vi.getTimerCount()).toBe(1);
    r.sub.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    await advance(60_000);
    expect(lw.lists).toHaveLength(1);
  });

  it('aborts the open watch and stops the resync ticker mid-stream', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { resyncPeriod: 1000 });
    await advance(1000);
    lw.watching.push({ type: 'ADDED', object: pod('b', 11) });
    await advance();
    expect(vi.getTimerCount()).toBe(2); // the ticker and the watch's deadline (HI-60)
    r.sub.unsubscribe();
    expect(lw.watching.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    const seen = r.events.length;
    await advance(60_000);
    expect(r.events).toHaveLength(seen);
    expect(lw.watches).toHaveLength(1);
  });

  it('stops when the subscriber unsubscribes from inside next()', async () => {
    const lw = new ScriptedLW();
    const seen: ReflectorEvent<Pod>[] = [];
    reflect(lw, { resyncPeriod: 1000 })
      .pipe(take(2))
      .subscribe((e) => seen.push(e));
    await advance();
    lw.watching.push({ type: 'ADDED', object: pod('b', 11) }, { type: 'ADDED', object: pod('c', 12) });
    await advance(5000);
    expect(seen.map((e) => e.type)).toEqual(['Replace', 'Added']);
    expect(lw.watching.signal.aborted).toBe(true);
    expect(lw.watches).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never completes on its own', async () => {
    const lw = new ScriptedLW();
    for (let i = 0; i < 5; i++) lw.watchScripts.push((w) => w.end());
    const r = runReflect(lw);
    await advance(600_000);
    expect(r.result.completed).toBe(false);
    expect(r.result.error).toBeUndefined();
    r.sub.unsubscribe();
  });
});

describe('reflect() with a synchronous scheduler', () => {
  it('works when the scheduler runs zero-delay work at once', async () => {
    const { queueScheduler } = await import('rxjs');
    const lw = new ScriptedLW();
    lw.watchScripts.push((w) => w.fail(new DecodeError('Unexpected token', '{"type":"MODIF', 0)));
    const r = runReflect(lw, { scheduler: queueScheduler });
    await advance();
    expect(r.delays()).toEqual([0]);
    expect(lw.watches).toHaveLength(2);
    r.sub.unsubscribe();
  });
});
