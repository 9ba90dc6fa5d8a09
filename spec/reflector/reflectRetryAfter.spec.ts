// What reflect() does with a server's Retry-After (HI-50, HI-51), under fake time with a scripted ListerWatcher.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubeApiError } from '../../src/errors/api/index.js';
import { advance, bookmark, runReflect, ScriptedLW } from './reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A ListerWatcher whose every list answers `make()`. */
function failingLists(make: () => Error): ScriptedLW {
  const lw = new ScriptedLW();
  const list = lw.list.bind(lw);
  lw.list = (opts, signal) => {
    lw.listAnswers.push(make());
    return list(opts, signal);
  };
  return lw;
}

describe('reflect() caps what a Retry-After can make it wait (HI-50)', () => {
  it('Retry-After: 3000000 on every list is one request per 30 s, not a storm of 1 ms timers', async () => {
    // 3,000,000 s is past what a timer holds (2³¹−1 ms): uncapped, Node fires it after 1 ms, every time.
    const lw = failingLists(() => new KubeApiError(429, 'slow down', { retryAfterSeconds: 3_000_000 }));
    const r = runReflect(lw);
    await advance(50);
    expect(lw.lists).toHaveLength(1);
    expect(r.delays()).toEqual([30_000]);
    await advance(29_950);
    expect(lw.lists).toHaveLength(2);
    r.sub.unsubscribe();
  });

  it('Retry-After: 86400 leaves the informer parked no longer than the backoff cap once the server is back', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(429, 'slow down', { retryAfterSeconds: 86_400 }));
    const r = runReflect(lw, { backoff: { maxMs: 10_000 } });
    await advance(9_999);
    expect(r.types()).toEqual([]);
    await advance(1);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('Retry-After: 0 repeated waits the first backoff step each time, never a tight loop', async () => {
    const lw = failingLists(() => new KubeApiError(503, 'unavailable', { retryAfterSeconds: 0 }));
    const r = runReflect(lw);
    await advance(8000);
    expect(r.delays().every((d) => d === 800)).toBe(true);
    expect(lw.lists.length).toBeLessThanOrEqual(11);
    r.sub.unsubscribe();
  });
});

describe('reflect() honours Retry-After on any 5xx, as client-go does (HI-51)', () => {
  it('a 503 with Retry-After waits what it says, not the grown health backoff', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(new KubeApiError(500, 'down'), new KubeApiError(500, 'down'), new KubeApiError(500, 'down'));
    lw.listAnswers.push(new KubeApiError(503, 'restarting', { retryAfterSeconds: 1 }));
    const r = runReflect(lw);
    await advance(800 + 1600 + 3200);
    expect(r.delays()).toEqual([800, 1600, 3200, 1000]);
    await advance(1000);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('a 503 with Retry-After on a watch relists after that wait', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    lw.watching.push(bookmark(12));
    lw.watching.fail(new KubeApiError(503, 'etcd leader change', { retryAfterSeconds: 2 }));
    await advance();
    expect(r.of('backoff')).toMatchObject([{ kind: 'server', delayMs: 2000 }]);
    await advance(2000);
    expect(lw.lists.map((l) => l.opts.resourceVersion)).toEqual(['0', '12']);
    r.sub.unsubscribe();
  });

  it('the Retry-After of a Status body counts too (a 504 ServerTimeout carries it there)', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(
      new KubeApiError(504, 'timeout', { reason: 'Timeout', details: { kind: 'Status', code: 504, details: { retryAfterSeconds: 3 } } as never }),
    );
    const r = runReflect(lw);
    await advance();
    expect(r.delays()).toEqual([3000]);
    r.sub.unsubscribe();
  });
});
