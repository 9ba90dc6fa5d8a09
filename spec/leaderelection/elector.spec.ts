import { first, type Observable } from 'rxjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.js';
import type { Leadership } from '../../src/leaderelection/types.js';
import { JITTER_FACTOR, type LeaderElectionOptions } from '../../src/leaderelection/options.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { world } from './virtualTime.js';

const micro = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

describe('leaderElection options', () => {
  const { store } = world();
  const lock = store.client('x');
  it.each([
    ['lock', { lock: {} }],
    ['identity', { identity: '' }],
    ['leaseDuration', { leaseDuration: 0 }],
    ['renewDeadline', { renewDeadline: Number.NaN }],
    ['retryPeriod', { retryPeriod: -1 }],
    ['leaseDuration', { leaseDuration: 10_000, renewDeadline: 10_000 }],
    ['renewDeadline', { renewDeadline: 2_400, retryPeriod: 2_000 }],
    ['releaseOnCancel', { releaseOnCancel: 'yes' }],
    ['onStartedLeading', { onStartedLeading: 1 }],
    ['onError', { onError: 'log' }],
    ['random', { random: 0.5 }],
    ['scheduler', { scheduler: {} }],
  ])('rejects a bad %s up front with a TypeError naming it', (name, bad) => {
    const opts = { lock, identity: 'a', ...bad } as LeaderElectionOptions;
    expect(() => leaderElection(opts)).toThrow(TypeError);
    expect(() => leaderElection(opts)).toThrow(name);
    expect(lock.calls).toHaveLength(0);
  });

  it('accepts client-go defaults and the jitter bound just above retryPeriod × 1.2', () => {
    expect(JITTER_FACTOR).toBe(1.2);
    expect(() => leaderElection({ lock, identity: 'a' })).not.toThrow();
    expect(() => leaderElection({ lock, identity: 'a', renewDeadline: 2_401, retryPeriod: 2_000, leaseDuration: 3_000 })).not.toThrow();
  });

  it('is typed as an Observable of Leadership and needs a lock and an identity', () => {
    expectTypeOf(leaderElection).returns.toEqualTypeOf<Observable<Leadership>>();
    // @ts-expect-error an identity is required
    void (() => leaderElection({ lock }));
    // @ts-expect-error durations are milliseconds, not strings
    void (() => leaderElection({ lock, identity: 'a', leaseDuration: '15s' }));
  });

  it('is cold: nothing touches the lock before subscribe', async () => {
    const w = world();
    const c = w.store.client('cold');
    leaderElection({ lock: c, identity: 'cold', scheduler: w.clock.scheduler });
    await w.clock.by(60_000);
    expect(c.calls).toHaveLength(0);
  });
});

describe('acquire and renew', () => {
  it('creates the lock at once, leads, and renews every retryPeriod keeping acquireTime', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    await clock.to(0);
    expect(a.log).toEqual(['new:a@0', 'started@0']);
    expect(a.states).toEqual([{ leading: false, leader: undefined }, { leading: true, leader: 'a' }]);
    expect(store.record).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: micro(0), renewTime: micro(0), leaderTransitions: 0 });

    await clock.to(6_000);
    expect(store.writes.map((w) => `${w.op}@${w.at}`)).toEqual(['create@0', 'update@2000', 'update@4000', 'update@6000']);
    expect(store.record).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: micro(0), renewTime: micro(6_000), leaderTransitions: 0 });
    // Renewals take the fast path: no read before each write.
    expect(a.client.calls.filter((c) => c.op === 'get')).toHaveLength(1);
    expect(a.errors).toEqual([]);
  });

  it('writes the lease duration in whole seconds, rounded up', async () => {
    const { clock, store, candidate } = world();
    candidate('a', { leaseDuration: 2_500, renewDeadline: 2_000, retryPeriod: 1_000 });
    await clock.to(0);
    expect(store.record?.leaseDurationSeconds).toBe(3);
  });

  it('a follower sees the holder, reports it, and never writes while the lease is renewed', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    await clock.to(1_000);
    const b = candidate('b');
    await clock.to(60_000);
    expect(b.log).toEqual(['new:a@1000']);
    expect(b.states).toEqual([{ leading: false, leader: undefined }, { leading: false, leader: 'a' }]);
    expect(store.writes.every((w) => w.by === 'a')).toBe(true);
    expect(b.client.calls.every((c) => c.op === 'get')).toBe(true);
    expect(a.leading()).toBe(true);
  });

  it('candidates retry every retryPeriod × (1 + random × 1.2)', async () => {
    const { clock, candidate } = world();
    candidate('a');
    await clock.to(0);
    const b = candidate('b', { random: () => 0.5 });
    await clock.to(10_000);
    // 2000 × (1 + 0.5 × 1.2) = 3200
    expect(b.client.calls.map((c) => c.at)).toEqual([0, 3_200, 6_400, 9_600]);
  });
});

describe('takeover judged on the local clock', () => {
  it('a follower takes over leaseDuration after it last saw the record change, not after renewTime', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    await clock.to(1_000);
    const b = candidate('b');
    // a's last renewal is written at 4000; b reads it at 5000.
    await clock.to(4_500);
    a.stop();
    expect(a.log.at(-1)).toBe('stopped@4500');
    expect(store.record?.renewTime).toBe(micro(4_000));
    // renewTime + 15 s = 19000, but b first saw that record at 5000: valid until 20000 on b's clock.
    await clock.to(19_000);
    expect(b.leading()).toBe(false);
    await clock.to(21_000);
    expect(b.log).toEqual(['new:a@1000', 'new:b@21000', 'started@21000']);
    expect(store.record).toEqual({ holderIdentity: 'b', leaseDurationSeconds: 15, acquireTime: micro(21_000), renewTime: micro(21_000), leaderTransitions: 1 });
  });

  it('timestamps written by a holder with a wrong clock change nothing', async () => {
    const { clock, store, candidate } = world();
    // A holder whose clock is a year ahead (or decades behind) left this record; it never renews.
    store.overwrite({ holderIdentity: 'ghost', leaseDurationSeconds: 15, acquireTime: micro(Date.UTC(2001, 0)), renewTime: micro(Date.UTC(2099, 0)), leaderTransitions: 4 });
    await clock.to(10_000);
    const b = candidate('b');
    await clock.to(24_000);
    expect(b.leading()).toBe(false);
    await clock.to(26_000);
    expect(b.log).toEqual(['new:ghost@10000', 'new:b@26000', 'started@26000']);
    expect(store.record?.leaderTransitions).toBe(5);
  });

  it('the expiry uses the duration written in the record, not the follower’s own', async () => {
    const { clock, store, candidate } = world();
    store.overwrite({ holderIdentity: 'ghost', leaseDurationSeconds: 5, acquireTime: micro(0), renewTime: micro(0), leaderTransitions: 0 });
    const b = candidate('b');
    await clock.to(4_000);
    expect(b.leading()).toBe(false);
    await clock.to(6_000);
    expect(b.leading()).toBe(true);
  });
});

describe('losing the lease', () => {
  it('a leader whose renewals fail stops exactly at its renew deadline, before a follower can take over', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    await clock.to(1_000);
    const b = candidate('b');
    await clock.to(5_000);
    a.client.fault = 'error500';
    await clock.to(13_999);
    expect(a.leading()).toBe(true);
    // Each failed attempt (6000, 8000, 10000, 12000) reported its update and its read.
    expect(a.errors.length).toBe(8);
    expect(a.errors.every((e) => e instanceof KubeApiError && e.status === 500)).toBe(true);
    await clock.to(14_000);
    // Last renewal sent at 4000 + renewDeadline 10000.
    expect(a.log).toEqual(['new:a@0', 'started@0', 'stopped@14000']);
    expect(a.states.at(-1)).toEqual({ leading: false, leader: 'a' });
    await clock.to(30_000);
    const bStart = b.log.find((l) => l.startsWith('started@'));
    expect(bStart).toBe('started@21000');
    expect(Number(bStart?.split('@')[1])).toBeGreaterThan(14_000);
    expect(store.record?.holderIdentity).toBe('b');
    // a stays a candidate: once its connection heals it follows b.
    a.client.fault = 'ok';
    await clock.to(40_000);
    expect(a.states.at(-1)).toEqual({ leading: false, leader: 'b' });
    expect(a.log.at(-1)).toBe('new:b@32000');
  });

  it('a renewal that never answers is cut at the deadline', async () => {
    const { clock, candidate } = world();
    const a = candidate('a');
    await clock.to(4_000);
    a.client.fault = 'blackhole';
    await clock.to(13_999);
    expect(a.leading()).toBe(true);
    await clock.to(14_000);
    expect(a.log.at(-1)).toBe('stopped@14000');
  });

  it('seeing another holder ends leadership at once, and a 409 is not reported', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    await clock.to(5_000);
    store.overwrite({ holderIdentity: 'intruder', leaseDurationSeconds: 15, acquireTime: micro(5_000), renewTime: micro(5_000), leaderTransitions: 1 });
    await clock.to(6_000);
    expect(a.log).toEqual(['new:a@0', 'started@0', 'stopped@6000', 'new:intruder@6000']);
    expect(a.states.at(-1)).toEqual({ leading: false, leader: 'intruder' });
    expect(a.errors).toEqual([]);
  });

  it('of two candidates starting together one leads; the loser’s 409 is silent', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    const b = candidate('b');
    await clock.to(20_000);
    expect([a.leading(), b.leading()].filter(Boolean)).toHaveLength(1);
    expect(store.writes.filter((w) => w.op === 'create')).toHaveLength(1);
    expect([...a.errors, ...b.errors]).toEqual([]);
  });
});

describe('stopping', () => {
  it('unsubscribing a leader stops it and touches the lock no more; without release the lease runs out', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a');
    await clock.to(3_000);
    const calls = a.client.calls.length;
    a.stop();
    expect(a.log).toEqual(['new:a@0', 'started@0', 'stopped@3000']);
    await clock.to(60_000);
    expect(a.client.calls).toHaveLength(calls);
    expect(store.record?.holderIdentity).toBe('a');
  });

  it('releaseOnCancel: stops acting first, then empties the holder with a 1 s lease; a follower takes over at its next try', async () => {
    const { clock, store, candidate } = world();
    const order: string[] = [];
    const a = candidate('a', { releaseOnCancel: true, onStoppedLeading: () => void order.push(`stopped, holder=${store.record?.holderIdentity}`) });
    await clock.to(1_000);
    const b = candidate('b');
    await clock.to(5_000);
    a.stop();
    await clock.to(5_000);
    order.push(`after release, holder=${JSON.stringify(store.record?.holderIdentity)}`);
    expect(order).toEqual(['stopped, holder=a', 'after release, holder=""']);
    expect(store.record).toEqual({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: micro(5_000), renewTime: micro(5_000), leaderTransitions: 0 });
    await clock.to(7_000);
    expect(b.log).toEqual(['new:a@1000', 'new:b@7000', 'started@7000']);
    expect(store.record?.leaderTransitions).toBe(1);
    expect(a.errors).toEqual([]);
  });

  it('release does not clobber a lock someone else took', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a', { releaseOnCancel: true });
    await clock.to(3_000);
    store.overwrite({ holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: micro(3_000), renewTime: micro(3_000), leaderTransitions: 1 });
    a.stop();
    await clock.to(10_000);
    expect(store.record?.holderIdentity).toBe('other');
    expect(a.errors).toEqual([]);
  });

  it('release goes over a renewal that landed while it was being cut', async () => {
    const { clock, store, candidate } = world();
    const a = candidate('a', { releaseOnCancel: true });
    await clock.to(2_000);
    a.client.latency = 500;
    await clock.to(4_100); // the renewal sent at 4000 is applied, its answer still on the way
    a.stop();
    await clock.to(6_000);
    expect(store.record?.holderIdentity).toBe('');
    expect(a.errors).toEqual([]);
  });
});

describe('callbacks', () => {
  it('unsubscribing from inside an emission stops everything', async () => {
    const { clock, store } = world();
    const lock = store.client('a');
    const stopped: number[] = [];
    const seen: Leadership[] = [];
    leaderElection({ lock, identity: 'a', scheduler: clock.scheduler, random: () => 0, onStoppedLeading: () => void stopped.push(clock.now()) })
      .pipe(first((l) => l.leading))
      .subscribe((l) => seen.push(l));
    await clock.to(60_000);
    expect(seen).toEqual([{ leading: true, leader: 'a' }]);
    expect(stopped).toEqual([0]);
    expect(lock.calls.map((c) => c.op)).toEqual(['get', 'create']);
  });

  it('what callbacks throw or reject is reported and the elector carries on', async () => {
    const { clock, candidate } = world();
    const a = candidate('a', {
      onNewLeader: () => {
        throw new Error('new leader boom');
      },
      onStartedLeading: async () => {
        throw new Error('started boom');
      },
    });
    await clock.to(4_000);
    expect(a.errors.map((e) => e.message)).toEqual(['new leader boom', 'started boom']);
    expect(a.leading()).toBe(true);
  });

  it('onStartedLeading gets a signal that aborts when leadership ends', async () => {
    const { clock, candidate } = world();
    let signal: AbortSignal | undefined;
    const a = candidate('a', { onStartedLeading: (s) => void (signal = s) });
    await clock.to(1_000);
    expect(signal?.aborted).toBe(false);
    a.stop();
    expect(signal?.aborted).toBe(true);
  });
});
