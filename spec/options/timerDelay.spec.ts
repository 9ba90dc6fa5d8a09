// Every timer fed by an option or a server value is clamped to what Node's timers hold (HI-56); fake timers
// reproduce Node's overflow (a longer delay fires after 1 ms), so an unclamped call site shows here.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { informer } from '../../src/informer/informer.js';
import { MAX_TIMER_MS, timerDelay } from '../../src/options/timerDelay.js';
import { advance, runReflect, ScriptedLW } from '../reflector/reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const MONTH_MS = 30 * 24 * 3600 * 1000;

describe('timerDelay', () => {
  it('keeps a delay within [0, 2³¹−1] ms', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(timerDelay(1000)).toBe(1000);
    expect(timerDelay(3_000_000_000)).toBe(MAX_TIMER_MS);
    expect(timerDelay(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS);
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(Number.NaN)).toBe(0);
  });
});

describe('timers fed by options do not overflow into 1 ms', () => {
  it('a resync period of a month does not tick every millisecond', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { resyncPeriod: MONTH_MS });
    await advance(100);
    expect(r.types()).toEqual(['Replace']);
    r.sub.unsubscribe();
  });

  it('whenSynced with a month-long timeout does not give up at once', async () => {
    const lw = new ScriptedLW();
    lw.listAnswers.push(() => 'hang');
    const inf = informer(lw, { onError: () => undefined });
    const life = inf.subscribe();
    let settled: string | undefined;
    inf.whenSynced({ timeout: MONTH_MS }).then(
      () => (settled = 'synced'),
      (err: Error) => (settled = err.message),
    );
    await advance(100);
    expect(settled).toBeUndefined();
    life.unsubscribe();
  });
});
