import { map } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import { FinalizerError } from '../../src/controller/finalizer.js';
import { ReconcileTimeoutError } from '../../src/controller/ReconcileTimeoutError.js';
import { TerminalError } from '../../src/controller/TerminalError.js';
import type { ControllerOptions } from '../../src/controller/types.js';
import { CallbackError } from '../../src/errors/CallbackError.js';
import type { KubeObject } from '../../src/store/types.js';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/rateLimiters.js';
import { deferred } from '../helpers/waitFor.js';
import { settle, virtualClock } from '../workqueue/virtualTime.js';
import { runController, type Harness } from './harness.js';
import { memorySource, obj } from './memorySource.js';

const harnesses: Harness[] = [];
afterEach(() => {
  for (const h of harnesses.splice(0)) h.subscription.unsubscribe();
});
const track = (h: Harness): Harness => (harnesses.push(h), h);

const alwaysFails = (): never => {
  throw new Error('cannot reach the bucket');
};

describe('controller: reconcile failures nobody consumes (CR-13)', () => {
  it('reports the first failure of a key at once, then at most one per key per minute with a count', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    primary.upsert(obj('b'));
    const h = track(
      runController(primary, { reconcile: alwaysFails, rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 10_000, maxDelayMs: 10_000 }) }, { consume: false }),
    );
    await h.advance(0);
    expect(h.errors.map((e) => e.message)).toEqual([
      'controller: the reconcile of default/a by memory failed: cannot reach the bucket',
      'controller: the reconcile of default/b by memory failed: cannot reach the bucket',
    ]);
    expect(h.errors[0]).toBeInstanceOf(CallbackError);
    expect((h.errors[0]?.cause as Error).message).toBe('cannot reach the bucket');
    // Retried every 10 s: five more failures each within the minute, none reported.
    for (let t = 0; t < 59_000; t += 1_000) await h.advance(1_000);
    expect(h.timesOf('default/a')).toHaveLength(6);
    expect(h.errors).toHaveLength(2);
    await h.advance(1_000); // the seventh failure, a minute after the first
    expect(h.errors.slice(2).map((e) => e.message)).toEqual([
      'controller: the reconcile of default/a by memory failed (5 more failures of it in the last 60 s not reported): cannot reach the bucket',
      'controller: the reconcile of default/b by memory failed (5 more failures of it in the last 60 s not reported): cannot reach the bucket',
    ]);
  });

  it('counts a next callback, an observer with next, or a pipe as consuming; an observer without next does not', async () => {
    const cases: [string, (ctl: ReturnType<typeof controller<KubeObject>>) => { unsubscribe(): void }, boolean][] = [
      ['subscribe(fn)', (ctl) => ctl.subscribe(() => {}), false],
      ['subscribe({ next })', (ctl) => ctl.subscribe({ next: () => {} }), false],
      ['pipe(map).subscribe()', (ctl) => ctl.pipe(map((o) => o.key)).subscribe(), false],
      ['subscribe()', (ctl) => ctl.subscribe(), true],
      ['subscribe({ error })', (ctl) => ctl.subscribe({ error: () => {} }), true],
      ['subscribe(null, error)', (ctl) => ctl.subscribe(null, () => {}), true],
    ];
    for (const [how, subscribe, reported] of cases) {
      const clock = virtualClock();
      const primary = memorySource<KubeObject>();
      primary.sync();
      primary.upsert(obj('a'));
      const errors: Error[] = [];
      const ctl = controller<KubeObject>({ for: primary, reconcile: alwaysFails, scheduler: clock.scheduler, onError: (e) => errors.push(e) });
      const sub = subscribe(ctl);
      await settle(50);
      expect({ how, reported: errors.length > 0 }).toEqual({ how, reported });
      sub.unsubscribe();
    }
  });

  it('reports once the last consuming subscriber has left, while others still hold the controller', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    let fail = false;
    const h = track(
      runController(primary, {
        reconcile: () => {
          if (fail) throw new Error('now failing');
        },
      }),
    );
    const silent = h.ctl.subscribe();
    await h.advance(0);
    fail = true;
    primary.upsert(obj('a', { rv: '2' }));
    await h.advance(0);
    expect(h.errors).toEqual([]); // the harness consumes the outcomes
    h.subscription.unsubscribe();
    primary.upsert(obj('a', { rv: '3' }));
    await h.advance(10_000);
    expect(h.errors.map((e) => e.message)).toEqual([expect.stringMatching(/reconcile of default\/a by memory failed: now failing/)]);
    silent.unsubscribe();
  });
});

describe('controller: objects from the cache are frozen (CR-14)', () => {
  it('fails a reconcile that writes to its object with a TypeError saying why and how to copy it', async () => {
    const primary = memorySource<KubeObject>('things', { freeze: true });
    primary.sync();
    primary.upsert(obj('a'));
    const h = track(
      runController(primary, {
        errorPolicy: () => undefined,
        reconcile: (o) => {
          (o.metadata as { labels?: Record<string, string> }).labels = { touched: 'yes' };
        },
      }),
    );
    await h.advance(0);
    const failed = h.outcomes[0];
    expect(failed?.type).toBe('failed');
    const error = failed?.type === 'failed' ? failed.error : undefined;
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toMatch(/^Cannot add property labels, object is not extensible: objects from the cache are deep-frozen.*structuredClone\(obj\)/);
    expect(error?.cause).toBeInstanceOf(TypeError);
    expect((error?.cause as Error).message).toBe('Cannot add property labels, object is not extensible');
  });

  it('leaves other TypeErrors as they are', async () => {
    const primary = memorySource<KubeObject>('things', { freeze: true });
    primary.sync();
    primary.upsert(obj('a'));
    const original = new TypeError('x.map is not a function');
    const h = track(
      runController(primary, {
        errorPolicy: () => undefined,
        reconcile: () => {
          throw original;
        },
      }),
    );
    await h.advance(0);
    expect(h.outcomes[0]?.type === 'failed' && h.outcomes[0].error).toBe(original);
  });
});

describe('controller: terminal errors (CR-15)', () => {
  it('records, reports and does not retry a TerminalError until the object changes', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('bad'));
    let policyCalls = 0;
    const h = track(
      runController(primary, {
        resyncPeriod: 5_000,
        errorPolicy: () => (policyCalls++, 'backoff'),
        reconcile: (o) => {
          if (o.metadata?.resourceVersion === '1') throw new TerminalError('spec.size must be an integer');
          return undefined;
        },
      }),
    );
    await h.advance(0);
    expect(h.outcomes).toEqual([expect.objectContaining({ type: 'failed', key: 'default/bad', terminal: true, requeueAfter: undefined, retries: 0 })]);
    // Reported although the outcomes are consumed: a terminal failure needs a person.
    expect(h.errors.map((e) => e.message)).toEqual([
      'controller: the reconcile of default/bad by memory failed for good (TerminalError; not retried until it changes): spec.size must be an integer',
    ]);
    expect(h.ctl.status()).toMatchObject({ errors: 1, terminalErrors: 1 });
    expect(policyCalls).toBe(0);
    await h.advance(60_000); // no backoff, no resync
    expect(h.timesOf('default/bad')).toEqual([0]);
    primary.upsert(obj('bad', { rv: '2' }));
    await h.advance(0);
    expect(h.timesOf('default/bad')).toEqual([0, 60_000]);
    expect(h.outcomes[1]).toMatchObject({ type: 'reconciled' });
  });

  it('counts a TerminalError found in the cause chain, as a finalizer step wraps it', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    const h = track(
      runController(primary, {
        reconcile: () => {
          throw new FinalizerError('apply', 'example.com/cleanup', 'default/a', new TerminalError('cannot apply'));
        },
      }),
    );
    await h.advance(0);
    await h.advance(60_000);
    expect(h.timesOf('default/a')).toHaveLength(1);
    expect(h.outcomes[0]).toMatchObject({ type: 'failed', terminal: true });
  });

  it('forgets the failures of a key that fails for good after backing off', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('a'));
    let call = 0;
    const h = track(
      runController(primary, {
        rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 100 }),
        reconcile: () => {
          if (++call < 3) throw new Error('transient');
          throw new TerminalError('now it is hopeless');
        },
      }),
    );
    for (let i = 0; i < 10; i++) await h.advance(100);
    expect(h.outcomes.map((o) => (o.type === 'failed' ? [o.terminal, o.retries] : o.type))).toEqual([
      [false, 1],
      [false, 2],
      [true, 0],
    ]);
  });
});

describe('controller: reconcile timeouts (CR-16)', () => {
  it('aborts the signal, counts the failure when the time is up, lists the key as stuck and hands it out again only after it returns', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('slow'));
    const release = deferred();
    let reason: unknown;
    let calls = 0;
    const h = track(
      runController(primary, {
        reconcileTimeoutMs: 1_000,
        rateLimiter: itemExponentialFailureRateLimiter({ baseDelayMs: 500 }),
        reconcile: async (_o, ctx) => {
          if (++calls > 1) return undefined;
          ctx.signal.addEventListener('abort', () => (reason = ctx.signal.reason));
          await release.promise; // ignores the signal
          return undefined;
        },
      }),
    );
    await h.advance(999);
    expect(h.outcomes).toEqual([]);
    expect(h.ctl.status().stuck).toEqual([]);
    await h.advance(1);
    expect(reason).toBeInstanceOf(ReconcileTimeoutError);
    expect(h.outcomes).toEqual([expect.objectContaining({ type: 'failed', key: 'default/slow', durationMs: 1_000, requeueAfter: 500, terminal: false })]);
    const timeoutError = h.outcomes[0]?.type === 'failed' ? h.outcomes[0].error : undefined;
    expect(timeoutError).toBe(reason);
    expect(timeoutError?.message).toBe('memory: the reconcile of default/slow ran longer than 1000 ms (reconcileTimeoutMs); its signal was aborted');
    expect(h.ctl.status().stuck).toEqual(['default/slow']);
    expect(h.ctl.status().errors).toBe(1);
    // A change, and the backoff coming due, while the stuck reconcile still runs: nothing starts.
    primary.upsert(obj('slow', { rv: '2' }));
    await h.advance(5_000);
    expect(calls).toBe(1);
    expect(h.ctl.status().inFlight).toBe(1);
    release.resolve();
    await h.advance(0);
    expect(calls).toBe(2);
    expect(h.ctl.status().stuck).toEqual([]);
    // The late return of the stuck reconcile adds no outcome of its own.
    expect(h.outcomes.map((o) => o.type)).toEqual(['failed', 'reconciled']);
  });

  it('records a reconcile that heeds the signal once, and leaves no timer behind a quick one', async () => {
    const primary = memorySource<KubeObject>();
    primary.sync();
    primary.upsert(obj('heeds'));
    primary.upsert(obj('quick'));
    const h = track(
      runController(primary, {
        reconcileTimeoutMs: 50,
        errorPolicy: () => undefined,
        reconcile: (o, ctx) =>
          o.metadata?.name === 'quick'
            ? undefined
            : new Promise<undefined>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
      }),
    );
    await h.advance(0);
    await h.advance(50);
    await h.advance(0);
    expect(h.outcomes.map((o) => [o.type, o.key])).toEqual([
      ['failed', 'default/heeds'],
      ['reconciled', 'default/quick'],
    ]);
    expect([h.ctl.status().errors, h.ctl.status().succeeded.success]).toEqual([1, 1]);
    expect(h.clock.pendingTimers()).toBe(0);
  });
});

describe('controller: owns entries that never match (CR-17)', () => {
  it('reports once after sync when the owned objects have owner references and none matches, naming the kinds seen', async () => {
    const primary = memorySource<KubeObject>('widgets');
    const owned = memorySource<KubeObject>('configmaps');
    primary.sync();
    owned.upsert(obj('w1-config', { owner: { kind: 'Widget', name: 'w1' } }));
    owned.upsert(obj('w2-config', { owner: { kind: 'Widget', name: 'w2' } }));
    const h = track(runController(primary, { owns: [{ source: owned, kind: 'widget', apiVersion: 'example.com/v1' }] }));
    await h.advance(0);
    expect(h.errors).toEqual([]);
    owned.sync();
    await h.advance(0);
    expect(h.errors.map((e) => e.message)).toEqual([
      'controller: owns[0] (kind "widget", apiVersion "example.com/v1", controller: true) matches none of the owner references of the 2 object(s) of configmaps that have some, ' +
        'so their changes enqueue nothing; they name: Widget example.com/v1. Kind and apiVersion are compared exactly (the version part of apiVersion is ignored)',
    ]);
    owned.upsert(obj('w3-config', { owner: { kind: 'Widget', name: 'w3' } }));
    await h.advance(0);
    expect(h.errors).toHaveLength(1);
  });

  it('says nothing when a reference matches, or when no owned object has owner references', async () => {
    const primary = memorySource<KubeObject>();
    const matching = memorySource<KubeObject>();
    const orphans = memorySource<KubeObject>();
    primary.sync();
    matching.upsert(obj('other', { owner: { kind: 'Other', name: 'x' } }));
    matching.upsert(obj('mine', { owner: { kind: 'Widget', name: 'w1' } }));
    orphans.upsert(obj('loose'));
    const h = track(
      runController(primary, {
        owns: [
          { source: matching, kind: 'Widget' },
          { source: orphans, kind: 'Widget' },
        ],
      }),
    );
    matching.sync();
    orphans.sync();
    await h.advance(0);
    matching.upsert(obj('another-other', { owner: { kind: 'Other', name: 'y' } }));
    await h.advance(0);
    expect(h.errors).toEqual([]);
  });

  it('notices a mismatch among objects created after sync', async () => {
    const primary = memorySource<KubeObject>();
    const owned = memorySource<KubeObject>();
    primary.sync();
    owned.sync();
    const h = track(runController(primary, { owns: [{ source: owned, kind: 'Widget', apiVersion: 'apps/v1' }] }));
    await h.advance(0);
    owned.upsert(obj('c', { owner: { kind: 'Widget', name: 'w', apiVersion: 'example.com/v1' } }));
    await h.advance(0);
    expect(h.errors.map((e) => e.message)).toEqual([expect.stringContaining('they name: Widget example.com/v1.')]);
  });
});

describe('controller: new options are checked up front (CR-18)', () => {
  const primary = memorySource<KubeObject>();
  const reconcile = (): undefined => undefined;
  it.each([
    [{ reconcileTimeoutMs: 0 }, /option "reconcileTimeoutMs" must be a finite number >= 1, got 0/],
    [{ reconcileTimeoutMs: -5 }, /option "reconcileTimeoutMs" must be a finite number >= 1, got -5/],
    [{ reconcileTimeoutMs: NaN }, /option "reconcileTimeoutMs" must be a finite number >= 1, got NaN/],
    [{ reconcileTimeoutMs: Infinity }, /option "reconcileTimeoutMs" must be a finite number >= 1, got Infinity/],
    [{ reconcileTimeoutMs: '5s' }, /option "reconcileTimeoutMs" must be a finite number >= 1, got "5s"/],
    [{ priorityQueue: 'yes' }, /option "priorityQueue" must be a boolean, got "yes"/],
    [{ priorityQueue: 0 }, /option "priorityQueue" must be a boolean, got 0/],
  ])('rejects %o', (extra, message) => {
    const opts = { for: primary, reconcile, ...extra } as unknown as ControllerOptions<KubeObject>;
    expect(() => controller(opts)).toThrow(TypeError);
    expect(() => controller(opts)).toThrow(message);
  });
});
