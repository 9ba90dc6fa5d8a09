// Faults every 20 s, each failing the next two watches (issue #24, finding 11): each costs a first delay, never a
// grown one, because a healthy watch starts the health backoff over (HI-52). Fake time, scripted ListerWatcher.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubeApiError } from '../../src/errors/api/index.js';
import { advance, pod, runReflect, ScriptedLW } from './reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('reflect() under a fault every 20 s', () => {
  it('is watching again within 2.4 s of every fault (0.8 s + 1.6 s), the tenth as the first', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    let rv = 10;
    const recoveries: number[] = [];
    for (let fault = 0; fault < 10; fault++) {
      // The server drops the watch; the next two watches are answered 500 (each relists), the third is fine.
      const failed = lw.watches.length;
      lw.watchScripts.push((w) => w.fail(new KubeApiError(500, 'injected')));
      lw.watchScripts.push((w) => w.fail(new KubeApiError(500, 'injected')));
      const at = Date.now();
      lw.watching.end();
      let recovered: number | undefined;
      for (let t = 0; t < 20_000; t += 100) {
        await advance(100);
        if (recovered === undefined && lw.watches.length === failed + 3) {
          recovered = Date.now() - at;
          lw.watching.push({ type: 'MODIFIED', object: pod('a', ++rv) });
        }
      }
      recoveries.push(recovered ?? Number.POSITIVE_INFINITY);
    }
    expect(recoveries.every((ms) => ms <= 2400)).toBe(true);
    expect(r.of('backoff').filter((b) => b.kind === 'server').map((b) => b.delayMs)).toEqual(Array(10).fill([800, 1600]).flat());
    r.sub.unsubscribe();
  });
});
