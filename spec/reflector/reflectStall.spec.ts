// Stall detection by rhythm, under fake time with a scripted ListerWatcher.
import { VirtualTimeScheduler } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_STALL, WatchRhythm } from '../../src/reflector/watchRhythm.js';
import { reflect, WatchStalledError, type ReflectOptions } from '../../src/reflector/index.js';
import { isExpired, KubeApiError } from '../../src/errors/api/index.js';
import { advance, bookmark, pod, runReflect, ScriptedLW } from './reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Pushes a bookmark with a rising resourceVersion to the open watch every `periodMs`, `count` times. */
async function beat(lw: ScriptedLW, periodMs: number, count: number, rv = { n: 100 }): Promise<void> {
  for (let i = 0; i < count; i++) {
    await advance(periodMs);
    lw.watching.push(bookmark(++rv.n));
  }
  await advance();
}

describe('WatchRhythm', () => {
  it('gives no deadline until it has heard the watch for twice the deadline', () => {
    const rhythm = new WatchRhythm(DEFAULT_STALL);
    rhythm.opened(0);
    for (let t = 1000; t <= 9000; t += 1000) rhythm.beat(t);
    expect(rhythm.deadlineMs(9000)).toBeUndefined();
    rhythm.beat(10_000);
    expect(rhythm.deadlineMs(10_000)).toBe(5000);
  });

  it('takes the longest recent gap, so bursts never shorten the deadline', () => {
    const rhythm = new WatchRhythm(DEFAULT_STALL);
    rhythm.opened(0);
    let t = 0;
    for (let i = 0; i < 10; i++) {
      t += 3000;
      rhythm.beat(t);
      for (let k = 0; k < 50; k++) rhythm.beat(t + k);
      t += 49;
    }
    expect(rhythm.expectedIntervalMs).toBe(3000);
    expect(rhythm.deadlineMs(t)).toBe(12_000);
  });

  it('learns nothing from a burst of initial events, however long it is', () => {
    const rhythm = new WatchRhythm(DEFAULT_STALL);
    rhythm.opened(0);
    for (let t = 0; t < 60_000; t += 10) rhythm.touch(t);
    expect(rhythm.deadlineMs(60_000)).toBeUndefined();
  });

  it('learns nothing from a silence that ended in a stall (HI-55)', () => {
    const rhythm = new WatchRhythm(DEFAULT_STALL);
    rhythm.opened(0);
    for (let t = 1000; t <= 12_000; t += 1000) rhythm.beat(t);
    expect(rhythm.deadlineMs(17_000)).toBe(5000);
    rhythm.stalled();
    rhythm.opened(17_000);
    rhythm.beat(18_000);
    expect(rhythm.expectedIntervalMs).toBe(1000);
    expect(rhythm.deadlineMs(18_000)).toBe(5000);
  });

  it('does not count the time between watches as a gap, and forgets gaps after ten minutes', () => {
    const rhythm = new WatchRhythm(DEFAULT_STALL);
    rhythm.opened(0);
    for (let t = 1000; t <= 12_000; t += 1000) rhythm.beat(t);
    rhythm.closed();
    rhythm.opened(100_000);
    rhythm.beat(101_000);
    expect(rhythm.expectedIntervalMs).toBe(1000);
    rhythm.beat(121_000);
    expect(rhythm.expectedIntervalMs).toBe(20_000);
    for (let t = 122_000; t <= 740_000; t += 1000) rhythm.beat(t);
    expect(rhythm.expectedIntervalMs).toBe(1000);
  });
});

describe('reflect() stall detection', () => {
  it('cuts a watch that missed four beats of its 1 s rhythm (never under 5 s) and resumes at once from the last RV', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    await beat(lw, 1000, 12);
    const lastBeat = Date.now();
    const first = lw.watching;
    await advance(4999);
    expect(lw.watches).toHaveLength(1);
    await advance(1);
    expect(first.signal.aborted).toBe(true);
    expect(lw.watches).toHaveLength(2);
    expect(lw.watching.opts.resourceVersion).toBe('112');
    expect(lw.lists).toHaveLength(1);
    const error = r.of('error')[0]?.error as WatchStalledError;
    expect(error).toBeInstanceOf(WatchStalledError);
    expect(error).toMatchObject({ silenceMs: 5000, expectedIntervalMs: 1000 });
    expect(r.of('backoff')).toMatchObject([{ kind: 'stalled', delayMs: 0 }]);
    // Measured (virtual time): the new watch is open 5 s after the last beat, 4 s after the first missed one.
    expect(r.of('watching').at(-1)!.at - lastBeat).toBe(5000);
    // What the stalled watch missed arrives on the new one.
    lw.watching.push({ type: 'ADDED', object: pod('b', 113) });
    await advance();
    expect(r.events.at(-1)).toMatchObject({ type: 'Added', resourceVersion: '113' });
    r.sub.unsubscribe();
  });

  it('waits four of a slower rhythm: 2 s beats give an 8 s deadline', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    await beat(lw, 2000, 9);
    await advance(7999);
    expect(lw.watches).toHaveLength(1);
    await advance(1);
    expect(lw.watches).toHaveLength(2);
    expect(r.of('error')[0]?.error).toMatchObject({ silenceMs: 8000, expectedIntervalMs: 2000 });
    r.sub.unsubscribe();
  });

  it('never cuts a quiet watch that has no rhythm', async () => {
    const lw = new ScriptedLW();
    // A timeout beyond the ten minutes below, so only the rhythm could cut the watch (its deadline is HI-60's).
    const r = runReflect(lw, { minWatchTimeoutSeconds: 3600 });
    await advance();
    // A burst (the initial state replayed), then an event now and then, then nothing.
    for (let i = 0; i < 200; i++) lw.watching.push({ type: 'MODIFIED', object: pod('a', 11 + i) });
    await advance(3000);
    lw.watching.push(bookmark(300));
    await advance(10 * 60_000);
    expect(lw.watches).toHaveLength(1);
    expect(r.of('error')).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(1); // the watch's deadline, no stall check
    r.sub.unsubscribe();
  });

  it('does not learn the silence it cut for: the next stall is found as soon as the first (HI-55)', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    await beat(lw, 1000, 12);
    await advance(5000);
    expect(lw.watches).toHaveLength(2);
    // The resumed watch hears its usual 1 s beats, then goes silent again: cut after 5 s again, not after
    // 4 × the 5 s silence of the first stall (20 s), which is what learning that silence would make of it.
    await beat(lw, 1000, 3);
    const lastBeat = Date.now();
    await advance(4999);
    expect(lw.watches).toHaveLength(2);
    await advance(1);
    expect(lw.watches).toHaveLength(3);
    expect(r.of('error').map((s) => s.error)).toEqual([expect.any(WatchStalledError), expect.any(WatchStalledError)]);
    expect(r.of('error')[1]?.error).toMatchObject({ silenceMs: 5000, expectedIntervalMs: 1000 });
    expect(Date.now() - lastBeat).toBe(5000);
    r.sub.unsubscribe();
  });

  it('is off with stallDetection: false', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { stallDetection: false });
    await advance();
    await beat(lw, 1000, 12);
    await advance(60_000);
    expect(lw.watches).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(1); // the watch's deadline (HI-60), no stall check
    r.sub.unsubscribe();
  });

  it('follows the options: 3 missed beats, never under 2 s', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw, { stallDetection: { missedBeats: 3, minMs: 2000 } });
    await advance();
    await beat(lw, 1000, 7);
    await advance(2999);
    expect(lw.watches).toHaveLength(1);
    await advance(1);
    expect(lw.watches).toHaveLength(2);
    r.sub.unsubscribe();
  });

  it('also cuts a watch that stalls before its first event, with the rhythm its predecessors taught', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    // 30 s of beats: the watch is healthy, so its end is routine.
    await beat(lw, 1000, 30);
    lw.watching.end();
    await advance();
    expect(lw.watches).toHaveLength(2);
    await advance(4999);
    expect(lw.watches).toHaveLength(2);
    await advance(1);
    expect(lw.watches).toHaveLength(3);
    expect(r.of('error').map((s) => s.error)).toEqual([expect.any(WatchStalledError)]);
    r.sub.unsubscribe();
  });

  it('cuts a streaming list that stalls before its end bookmark and streams again, not a paged list', async () => {
    const lw = new ScriptedLW();
    const END = { 'k8s.io/initial-events-end': 'true' };
    lw.watchScripts.push((w) => w.push({ type: 'ADDED', object: pod('a', 5) }, bookmark(10, END)));
    const r = runReflect(lw, { initialList: 'stream' });
    await advance();
    await beat(lw, 1000, 12);
    // The server expires the watch; the streaming relist sends one object, then nothing.
    lw.watchScripts.push((w) => w.push({ type: 'ADDED', object: pod('a', 5) }));
    lw.watchScripts.push((w) => w.push({ type: 'ADDED', object: pod('a', 120) }, bookmark(121, END)));
    lw.watching.fail(new KubeApiError(410, 'too old'));
    await advance();
    expect(lw.watches).toHaveLength(2);
    await advance(5000);
    expect(lw.watches).toHaveLength(3);
    expect(lw.watches.map((w) => w.opts.sendInitialEvents)).toEqual([true, true, true]);
    expect(lw.lists).toHaveLength(0);
    expect(r.of('error').map((s) => s.error)).toEqual([expect.any(KubeApiError), expect.any(WatchStalledError)]);
    expect(isExpired(r.of('error')[0]?.error)).toBe(true);
    expect(r.events.at(-1)).toEqual({ type: 'Replace', items: [pod('a', 120)], resourceVersion: '121' });
    r.sub.unsubscribe();
  });

  it('clears its timer on unsubscribe', async () => {
    const lw = new ScriptedLW();
    const r = runReflect(lw);
    await advance();
    await beat(lw, 1000, 12);
    expect(vi.getTimerCount()).toBe(2); // the stall check and the watch's deadline (HI-60)
    r.sub.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    expect(lw.watching.signal.aborted).toBe(true);
  });

  it('runs its timer on the given scheduler', async () => {
    const scheduler = new VirtualTimeScheduler();
    const lw = new ScriptedLW();
    const r = runReflect(lw, { scheduler });
    await advance();
    // Virtual time runs only as far as each beat, so the reflector sees every beat at its own time.
    for (let i = 1; i <= 12; i++) {
      scheduler.schedule(() => lw.watching.push(bookmark(100 + i)), 1000);
      scheduler.maxFrames = i * 1000;
      scheduler.flush();
      await advance();
    }
    expect(lw.watches).toHaveLength(1);
    // The stall check is due at 17 s, the watch's deadline (HI-60) minutes later; flushing to 17 s runs the check.
    scheduler.maxFrames = 17_000;
    scheduler.flush();
    await advance();
    expect(scheduler.now()).toBe(17_000);
    expect(vi.getTimerCount()).toBe(0);
    expect(r.of('error')[0]?.error).toMatchObject({ silenceMs: 5000 });
    expect(lw.watches).toHaveLength(2);
    r.sub.unsubscribe();
  });

  it.each([
    ['stallDetection', { stallDetection: 5 }],
    ['stallDetection.missedBeats', { stallDetection: { missedBeats: 0 } }],
    ['stallDetection.minMs', { stallDetection: { minMs: -1 } }],
    ['stallDetection.minMs', { stallDetection: { minMs: 0 } }],
  ])('rejects a bad %s up front', (name, opts) => {
    expect(() => reflect(new ScriptedLW(), opts as ReflectOptions)).toThrow(TypeError);
    expect(() => reflect(new ScriptedLW(), opts as ReflectOptions)).toThrow(name);
  });
});
