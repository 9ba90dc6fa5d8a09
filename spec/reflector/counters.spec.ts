import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { probedReflect } from '../../src/reflector/reflect.js';
import { reflect, type ReflectorStatus } from '../../src/reflector/index.js';
import type { ReflectorProbe } from '../../src/reflector/types.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { advance, bookmark, pod, ScriptedLW } from './reflectScripted.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const noRetries = { 'watch-closed': 0, 'very-short-watch': 0, expired: 0, decode: 0, stalled: 0, 'initial-events-incomplete': 0, throttled: 0, server: 0 };

describe('reflect() counters by reason', () => {
  it('counts relists by what led to them (adding up to relists) and every retry by its kind', async () => {
    const lw = new ScriptedLW();
    // watch 1 fails (a relist), that relist fails (a list again), watch 2 is very short (a relist), watch 3 closes early.
    lw.watchScripts.push(
      (w) => w.fail(new KubeApiError(500, 'boom')),
      (w) => w.end(),
      (w) => {
        w.push(bookmark(11));
        w.end();
      },
    );
    lw.listAnswers.push({ metadata: { resourceVersion: '10' }, items: [pod('a', 5)] }, new KubeApiError(503, 'down'));
    const statuses: ReflectorStatus[] = [];
    const sub = reflect(lw, { random: () => 0, status: (s) => statuses.push(s) }).subscribe();
    await advance();
    await advance(800 + 1600);
    expect(lw.lists).toHaveLength(4);
    expect(lw.watches).toHaveLength(4);
    const counters = statuses.at(-1)!.counters;
    expect(counters).toMatchObject({ lists: 4, relists: 3, watches: 4 });
    expect(counters.relistsByReason).toEqual({ expired: 0, 'very-short-watch': 1, 'watch-failed': 1, 'list-failed': 1 });
    const byReason = Object.values(counters.relistsByReason).reduce((a, b) => a + b, 0);
    expect(byReason).toBe(counters.relists);
    expect(counters.retriesByKind).toEqual({ ...noRetries, server: 2, 'very-short-watch': 1, 'watch-closed': 1 });
    // Each status carries its own copy: the first one still shows nothing counted by reason.
    expect(statuses[0]!.counters.relistsByReason['watch-failed']).toBe(0);
    expect(statuses[0]!.counters.retriesByKind.server).toBe(0);
    sub.unsubscribe();
  });

  it('a probe reads the counters and the resume point between status reports, which come only on a change of state', async () => {
    const lw = new ScriptedLW();
    const probes: ReflectorProbe[] = [];
    const statuses: ReflectorStatus[] = [];
    const sub = probedReflect(lw, { random: () => 0, status: (s) => statuses.push(s) }, (p) => probes.push(p)).subscribe();
    expect(probes).toHaveLength(1);
    await advance();
    const probe = probes[0]!;
    expect(probe.lastSyncResourceVersion).toBe('10');
    lw.watching.push({ type: 'ADDED', object: pod('b', 12) }, bookmark(14));
    await advance();
    expect(probe.counters()).toMatchObject({ lists: 1, watches: 1, events: 2 });
    expect(probe.lastSyncResourceVersion).toBe('14');
    // No state changed, so the last report still shows the watch as it opened.
    expect(statuses.at(-1)!.counters.events).toBe(0);
    // A copy each time: reading never lets a caller change the reflector's totals.
    (probe.counters().retriesByKind as Record<string, number>)['server'] = 99;
    expect(probe.counters().retriesByKind.server).toBe(0);
    sub.unsubscribe();
    // A second subscription is a run of its own, with its own probe.
    const again = probedReflect(lw, {}, (p) => probes.push(p)).subscribe();
    expect(probes).toHaveLength(2);
    expect(probes[1]!.counters().lists).toBe(1);
    again.unsubscribe();
  });
});
