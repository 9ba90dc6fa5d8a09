import type { V1Pod } from '@kubernetes/client-node';
import { Subject, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallbackError } from '../../src/errors/CallbackError.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { predicateFilter } from '../../src/operators/predicateFilter.js';
import {
  annotationsChanged,
  generationChanged,
  labelsChanged,
  resourceVersionChanged,
} from '../../src/operators/predicates.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../../src/store/types.js';

interface Meta {
  uid?: string;
  generation?: number;
  rv?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  name?: string;
}
const obj = ({ uid = 'u1', generation, rv = '1', labels, annotations, name = 'web' }: Meta): KubeObject => ({
  metadata: { namespace: 'ns', name, uid, generation, resourceVersion: rv, labels, annotations },
});

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

afterEach(() => {
  vi.restoreAllMocks();
  setErrorReporter(undefined);
});

describe('predicateFilter on objects', () => {
  it('passes the first object of a UID, then only generation changes', () => {
    const v = {
      a: obj({ generation: 1, rv: '1' }),
      b: obj({ generation: 1, rv: '2' }),
      c: obj({ generation: 2, rv: '3' }),
      d: obj({ generation: 2, rv: '4' }),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b-c-d-|', v).pipe(predicateFilter(generationChanged))).toBe('a---c---|', v);
    });
  });

  it('passes a re-created object (same name, new UID) even with an unchanged generation', () => {
    const v = {
      a: obj({ uid: 'u1', generation: 1 }),
      b: obj({ uid: 'u2', generation: 1 }),
      c: obj({ uid: 'u2', generation: 1, rv: '2' }),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b-c|', v).pipe(predicateFilter(generationChanged))).toBe('a-b--|', v);
    });
  });

  it('keeps objects with different names apart', () => {
    const v = {
      a: obj({ name: 'a', uid: 'ua', generation: 1 }),
      b: obj({ name: 'b', uid: 'ub', generation: 1 }),
      c: obj({ name: 'a', uid: 'ua', generation: 1, rv: '2' }),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b-c|', v).pipe(predicateFilter(generationChanged))).toBe('a-b--|', v);
    });
  });

  it('passes when any of several predicate values changed', () => {
    const v = {
      a: obj({ generation: 1, labels: { app: 'web' } }),
      b: obj({ generation: 1, labels: { app: 'web' }, annotations: { note: 'x' } }),
      c: obj({ generation: 1, labels: { app: 'api' } }),
      d: obj({ generation: 2, labels: { app: 'api' } }),
    };
    scheduler().run(({ cold, expectObservable }) => {
      const filtered = cold('a-b-c-d|', v).pipe(predicateFilter(generationChanged, labelsChanged));
      expectObservable(filtered).toBe('a---c-d|', v);
    });
  });

  it('lets everything through when no predicate can tell (a pod has no generation)', () => {
    const v = { a: obj({ rv: '1' }), b: obj({ rv: '1' }) };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b|', v).pipe(predicateFilter(generationChanged))).toBe('a-b|', v);
    });
  });

  it('treats undefined as a value when another predicate can tell', () => {
    const v = { a: obj({ labels: { app: 'web' } }), b: obj({ labels: { app: 'web' }, rv: '2' }) };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b|', v).pipe(predicateFilter(generationChanged, labelsChanged))).toBe('a--|', v);
    });
  });

  it('compares labels and annotations regardless of key order, and no map equals an empty one', () => {
    const v = {
      a: obj({ labels: { x: '1', y: '2' }, annotations: undefined }),
      b: obj({ labels: { y: '2', x: '1' }, annotations: {} }),
      c: obj({ labels: { y: '2', x: '1' }, annotations: { z: '3' } }),
      d: obj({ labels: { y: '2', x: '1', w: '0' }, annotations: { z: '3' } }),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b-c-d|', v).pipe(predicateFilter(labelsChanged))).toBe('a-----d|', v);
      expectObservable(cold('a-b-c-d|', v).pipe(predicateFilter(annotationsChanged))).toBe('a---c--|', v);
    });
  });

  it('drops exact repeats with resourceVersionChanged', () => {
    const v = { a: obj({ rv: '1' }), b: obj({ rv: '1' }), c: obj({ rv: '2' }) };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b-c|', v).pipe(predicateFilter(resourceVersionChanged))).toBe('a---c|', v);
    });
  });

  it('lets an object without a name through, since it cannot be remembered', () => {
    const nameless: KubeObject = { metadata: { generation: 1 } };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-a|', { a: nameless }).pipe(predicateFilter(generationChanged))).toBe('a-a|', {
        a: nameless,
      });
    });
  });

  it('reports a throwing predicate and lets the object through', () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    const v = { a: obj({ generation: 1, labels: { bad: 'yes' } }), b: obj({ generation: 1 }) };
    const picky = (o: KubeObject) => {
      if (o.metadata?.labels?.['bad'] === 'yes') throw new Error('cannot read this one');
      return o.metadata?.generation;
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-a-b-b|', v).pipe(predicateFilter(picky))).toBe('a-a-b--|', v);
    });
    expect(reported).toHaveLength(2);
    expect(reported.every((e) => e instanceof CallbackError && e.operator === 'predicateFilter')).toBe(true);
    expect(String(reported[0]?.message)).toContain('cannot read this one');
  });
});

describe('predicateFilter on informer events', () => {
  const g1 = obj({ generation: 1, rv: '1' });
  const g1b = obj({ generation: 1, rv: '2' });
  const g2 = obj({ generation: 2, rv: '3' });
  const events = {
    a: { type: 'add', obj: g1, isInInitialList: true },
    s: { type: 'update', oldObj: g1, obj: g1 },
    t: { type: 'update', oldObj: g1, obj: g1b },
    u: { type: 'update', oldObj: g1b, obj: g2 },
    d: { type: 'delete', obj: g2 },
    x: { type: 'delete', obj: new DeletedFinalStateUnknown<KubeObject>('ns/web', undefined) },
    r: { type: 'add', obj: g2, isInInitialList: false },
  } satisfies Record<string, InformerEvent<KubeObject>>;

  it('drops resyncs and status-only updates, passes spec changes and every delete', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<KubeObject>>('a-s-t-u-d|', events);
      expectObservable(source.pipe(predicateFilter(generationChanged))).toBe('a-----u-d|', events);
    });
  });

  it('forgets a key on delete, tombstones without state included', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // Same UID and generation re-added: only forgetting on delete explains it passing.
      const source = cold<InformerEvent<KubeObject>>('r-d-r-x-r|', events);
      expectObservable(source.pipe(predicateFilter(generationChanged))).toBe('r-d-r-x-r|', events);
    });
  });

  it('compares an update it has no memory of with its old object', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<KubeObject>>('t-u|', events);
      expectObservable(source.pipe(predicateFilter(generationChanged))).toBe('--u|', events);
    });
  });

  it('cannot be ended by an update without oldObj (the type forbids it; a hand-made stream may still send one)', () => {
    setErrorReporter(() => undefined); // the predicate's TypeError on the missing object is reported
    const bare = { n: { type: 'update', obj: g1 } as unknown as InformerEvent<KubeObject>, ...events };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<InformerEvent<KubeObject>>('n-u-d|', bare).pipe(predicateFilter(generationChanged))).toBe('n-u-d|', bare);
    });
  });

  it('forwards an error after the values that preceded it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<KubeObject>>('a-s-#', events, new Error('boom'));
      expectObservable(source.pipe(predicateFilter(generationChanged))).toBe('a---#', events, new Error('boom'));
    });
  });

  it('unsubscribes from the source when the consumer unsubscribes early', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<InformerEvent<KubeObject>>('a-u-d|', events);
      expectObservable(source.pipe(predicateFilter(generationChanged)), '^--!').toBe('a-u', events);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('releases the source on teardown and starts a new subscription with no memory', () => {
    const source = new Subject<KubeObject>();
    const filter = predicateFilter(generationChanged);
    const first: KubeObject[] = [];
    const sub = source.pipe(filter).subscribe((o) => first.push(o));
    source.next(g1);
    source.next(g1b);
    sub.unsubscribe();
    expect(source.observed).toBe(false);
    const second: KubeObject[] = [];
    source.pipe(filter).subscribe((o) => second.push(o));
    source.next(g1b);
    expect(first).toEqual([g1]);
    expect(second).toEqual([g1b]);
  });
});

describe('predicateFilter types', () => {
  it('keeps the element type of the stream it is piped into', () => {
    const events = new Subject<InformerEvent<V1Pod>>();
    const pods = new Subject<V1Pod>();
    // Compile-time checks: the built-in predicates accept client-node models, and the output type is the input type.
    const filteredEvents: Observable<InformerEvent<V1Pod>> = events.pipe(predicateFilter(generationChanged, labelsChanged));
    const filteredPods: Observable<V1Pod> = pods.pipe(predicateFilter(resourceVersionChanged));
    const seen: unknown[] = [];
    filteredEvents.subscribe((e) => seen.push(e.type));
    filteredPods.subscribe((p) => seen.push(p.spec?.nodeName));
    events.next({ type: 'add', obj: { metadata: { name: 'p', uid: 'u' } }, isInInitialList: false });
    pods.next({ metadata: { name: 'p', uid: 'u', resourceVersion: '1' }, spec: { containers: [], nodeName: 'n1' } });
    expect(seen).toEqual(['add', 'n1']);
  });
});

describe('predicateFilter options', () => {
  it('rejects an empty predicate list and non-functions', () => {
    expect(() => predicateFilter()).toThrow(TypeError);
    expect(() => predicateFilter()).toThrow(/predicates/);
    expect(() => predicateFilter(generationChanged, 'generation' as never)).toThrow(/predicates\[1\].*generation/);
  });
});
