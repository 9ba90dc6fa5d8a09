import fc from 'fast-check';
import { asyncScheduler, map, merge, NEVER, queueScheduler, Subject, takeUntil, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallbackError } from '../../src/errors/CallbackError.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { debounceByKey } from '../../src/operators/debounceByKey.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../../src/store/types.js';

// Values are "<key><n>": the first letter is the key.
const v = { a: 'a1', b: 'a2', c: 'b1', d: 'b2', e: 'c1' };
const firstLetter = (s: string) => s[0];

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  setErrorReporter(undefined);
});

describe('debounceByKey', () => {
  it('emits the newest value of a key once it has been quiet for dueTime', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-b-------|', v);
      expectObservable(source.pipe(debounceByKey(3, firstLetter))).toBe('-----b----|', v);
    });
  });

  it('keeps keys independent: a busy key does not delay another', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('ac-b-b-b----|', v);
      expectObservable(source.pipe(debounceByKey(3, firstLetter))).toBe('----d-----b-|', { ...v, d: 'b1' });
    });
  });

  it('emits a value per burst, not per value', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-b-----a-b-----|', v);
      expectObservable(source.pipe(debounceByKey(2, firstLetter))).toBe('----b-------b---|', v);
    });
  });

  it('flushes pending values on completion, oldest due first', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      // a1 pending, then b1, then a2 restarts key a: due order is b1, a2.
      const source = cold('a-c-b|', v);
      expectObservable(source.pipe(debounceByKey(10, firstLetter))).toBe('-----(cb|)', v);
    });
  });

  it('keys strings by themselves, objects and events by namespace/name', () => {
    const obj = (name: string, rv: string): KubeObject => ({ metadata: { namespace: 'ns', name, resourceVersion: rv } });
    const x1 = obj('x', '1');
    const x2 = obj('x', '2');
    const y1 = obj('y', '1');
    const events = {
      a: { type: 'add', obj: x1, isInInitialList: true },
      u: { type: 'update', oldObj: x1, obj: x2 },
      t: { type: 'delete', obj: new DeletedFinalStateUnknown('ns/x', x2) },
      y: { type: 'add', obj: y1, isInInitialList: true },
    } satisfies Record<string, InformerEvent<KubeObject>>;
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('ab-a---|', { a: 'ns/a', b: 'ns/b' }).pipe(debounceByKey(2))).toBe('--ab-a-|', {
        a: 'ns/a',
        b: 'ns/b',
      });
      expectObservable(cold('xyz---|', { x: x1, y: y1, z: x2 }).pipe(debounceByKey(2))).toBe('---yz-|', { y: y1, z: x2 });
      expectObservable(cold<InformerEvent<KubeObject>>('auyt---|', events).pipe(debounceByKey(2))).toBe(
        '----yt-|',
        events,
      );
    });
  });

  it('drops pending values and forwards an error', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-c-#', v, new Error('boom'));
      expectObservable(source.pipe(debounceByKey(3, firstLetter))).toBe('---a#', v, new Error('boom'));
    });
  });

  it('emits nothing more after an early unsubscribe and releases the source', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('a---c-----|', v);
      expectObservable(source.pipe(debounceByKey(2, firstLetter)), '^----!').toBe('--a--', v);
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('clears its timers on unsubscribe', () => {
    vi.useFakeTimers();
    const source = new Subject<string>();
    const seen: string[] = [];
    const sub = source.pipe(debounceByKey(1_000, firstLetter, asyncScheduler)).subscribe((s) => seen.push(s));
    source.next('a1');
    source.next('b1');
    source.next('a2');
    // a2 replaced a1: its timer is cancelled, not left to fire into nothing.
    expect(vi.getTimerCount()).toBe(2);
    sub.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    expect(source.observed).toBe(false);
    vi.advanceTimersByTime(5_000);
    expect(seen).toEqual([]);
  });

  it('clears its timers on completion and error', () => {
    vi.useFakeTimers();
    const completing = new Subject<string>();
    completing.pipe(debounceByKey(1_000, firstLetter, asyncScheduler)).subscribe();
    completing.next('a1');
    completing.complete();
    expect(vi.getTimerCount()).toBe(0);

    const failing = new Subject<string>();
    failing.pipe(debounceByKey(1_000, firstLetter, asyncScheduler)).subscribe({ error: () => {} });
    failing.next('a1');
    failing.error(new Error('boom'));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('works with a scheduler that runs the timer synchronously', () => {
    const seen: string[] = [];
    const source = new Subject<string>();
    source.pipe(debounceByKey(0, firstLetter, queueScheduler)).subscribe((s) => seen.push(s));
    source.next('a1');
    source.next('a2');
    expect(seen).toEqual(['a1', 'a2']);
  });

  it('reports a throwing keyOf and emits that value undebounced', () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    const keyOf = (s: string) => {
      if (s === 'b1') throw new Error('no key for b1');
      return s[0];
    };
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('ac---|', v).pipe(debounceByKey(2, keyOf))).toBe('-ca--|', v);
    });
    expect(reported).toHaveLength(1);
    expect(reported.every((e) => e instanceof CallbackError && e.operator === 'debounceByKey')).toBe(true);
    expect(String(reported[0]?.message)).toContain('no key for b1');
  });

  it('rejects invalid arguments, naming them', () => {
    expect(() => debounceByKey(-1)).toThrow(/dueTime.*-1/);
    expect(() => debounceByKey(Number.NaN)).toThrow(/dueTime.*NaN/);
    expect(() => debounceByKey('10' as never)).toThrow(TypeError);
    expect(() => debounceByKey(10, 'name' as never)).toThrow(/keyOf.*name/);
    expect(() => debounceByKey(10, undefined, {} as never)).toThrow(/scheduler/);
  });
});

describe('debounceByKey property', () => {
  it('emits exactly the values not followed by their key within dueTime, each dueTime after it arrived', () => {
    const input = fc.array(fc.record({ at: fc.nat(40), key: fc.constantFrom('a', 'b', 'c') }), { maxLength: 30 });
    fc.assert(
      fc.property(input, fc.integer({ min: 1, max: 10 }), (values, dueTime) => {
        const arrivals = values.map((v, index) => ({ ...v, index })).sort((x, y) => x.at - y.at || x.index - y.index);
        const end = Math.max(0, ...arrivals.map((v) => v.at)) + dueTime + 1;
        const expected = arrivals
          // `<=`: at the same virtual instant the arrival's timer, scheduled first, runs before the debounce timer.
          .filter((v, i) => !arrivals.slice(i + 1).some((w) => w.key === v.key && w.at - v.at <= dueTime))
          .map((v) => ({ index: v.index, at: v.at + dueTime }))
          .sort((x, y) => x.at - y.at);
        const actual: { index: number; at: number }[] = [];
        const scheduler = testScheduler();
        scheduler.run(() => {
          // NEVER keeps the source open until `end`, after every timer has fired: no flush on completion here.
          const source = merge(NEVER, ...arrivals.map((v) => timer(v.at).pipe(map(() => v)))).pipe(takeUntil(timer(end)));
          source
            .pipe(debounceByKey(dueTime, (v) => v.key))
            .subscribe((v) => actual.push({ index: v.index, at: scheduler.now() }));
        });
        expect(actual).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
