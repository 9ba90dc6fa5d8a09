// An informer reports when its cache stays behind the server past maxLagMs, and /healthz fails on it (HI-58).
// Fake time with a scripted ListerWatcher.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { informer } from '../../src/informer/informer.js';
import type { InformerStatus } from '../../src/informer/types.js';
import { liveness, type ProbedInformer, type ProbeView } from '../../src/manager/health.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { advance, bookmark, ScriptedLW } from '../reflector/reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A ListerWatcher whose lists fail with 503 while `down.value` is true. */
function flakyServer(down: { value: boolean }): ScriptedLW {
  const lw = new ScriptedLW();
  const list = lw.list.bind(lw);
  lw.list = (opts, signal) => {
    if (down.value) lw.listAnswers.unshift(new KubeApiError(503, 'unavailable'));
    return list(opts, signal);
  };
  return lw;
}

function probeOf(i: ProbedInformer): ProbeView {
  return {
    controllers: [],
    informers: [i],
    otherSources: [],
    maxSilenceMs: 10 * 60_000,
    maxInitialSyncMs: 10 * 60_000,
    syncedAt: () => 0,
    unsyncedSince: () => undefined,
    now: () => Date.now(),
    controllersRun: () => true,
    stopping: () => false,
  };
}

describe('informer: a cache that stays behind is reported lagging', () => {
  it('turns lagging maxLagMs after the first failure, says so on status$, fails /healthz, and clears on the next list', async () => {
    const down = { value: false };
    const lw = flakyServer(down);
    const i = informer(lw, { maxLagMs: 10_000, onError: () => undefined });
    const seen: InformerStatus[] = [];
    const sub = i.status$.subscribe((s) => seen.push(s));
    const life = i.subscribe();
    await advance();
    expect(i.status()).toMatchObject({ synced: true, behindSince: undefined, lagging: false });
    expect(i.status().currentAt).toBe(Date.now());

    down.value = true;
    const fellBehind = Date.now();
    lw.watching.fail(new KubeApiError(500, 'down'));
    await advance();
    expect(i.status()).toMatchObject({ behindSince: fellBehind, lagging: false });
    await advance(10_000 - 1);
    expect(i.status().lagging).toBe(false);
    expect(liveness(probeOf(i as unknown as ProbedInformer)).every((c) => c.ok)).toBe(true);
    await advance(1);
    expect(i.status().lagging).toBe(true);
    expect(seen.at(-1)?.lagging).toBe(true);
    const failed = liveness(probeOf(i as unknown as ProbedInformer)).find((c) => !c.ok);
    expect(failed?.detail).toMatch(/^behind the server for 10 s \(past its maxLagMs\)/);

    down.value = false;
    await advance(60_000);
    expect(i.status()).toMatchObject({ behindSince: undefined, lagging: false });
    expect(liveness(probeOf(i as unknown as ProbedInformer)).every((c) => c.ok)).toBe(true);
    sub.unsubscribe();
    life.unsubscribe();
  });

  it('a fault the reflector recovers from in seconds never counts as lag', async () => {
    const lw = new ScriptedLW();
    const i = informer(lw, { maxLagMs: 10_000, onError: () => undefined });
    const life = i.subscribe();
    await advance();
    for (let k = 0; k < 5; k++) {
      lw.watchScripts.push((w) => w.fail(new KubeApiError(500, 'injected')));
      lw.watching.end();
      await advance(2000);
      lw.watching.push(bookmark(100 + k));
      await advance(18_000);
      expect(i.status()).toMatchObject({ behindSince: undefined, lagging: false });
    }
    life.unsubscribe();
  });

  it('an unusable event skipped on a quiet watch is not lag: the watch carries on', async () => {
    const lw = new ScriptedLW();
    const errors: Error[] = [];
    const i = informer(lw, { maxLagMs: 10_000, onError: (e) => errors.push(e) });
    const life = i.subscribe();
    await advance();
    lw.watching.push({ type: 'MODIFIED', object: { metadata: { resourceVersion: '11' } } as never });
    await advance(60_000);
    expect(errors).toHaveLength(1);
    expect(i.status()).toMatchObject({ behindSince: undefined, lagging: false });
    life.unsubscribe();
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5'])('rejects maxLagMs %s up front', (value) => {
    expect(() => informer(new ScriptedLW(), { maxLagMs: value as number })).toThrow(/maxLagMs/);
  });
});
