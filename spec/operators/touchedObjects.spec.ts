import { Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { touchedObjects } from '../../src/operators/touchedObjects.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';

interface Obj {
  metadata: { namespace: string; name: string; resourceVersion: string };
}
const obj = (name: string, rv: string): Obj => ({ metadata: { namespace: 'ns', name, resourceVersion: rv } });

const a1 = obj('a', '1');
const a2 = obj('a', '2');
const b1 = obj('b', '1');

const events = {
  a: { type: 'add', obj: a1, isInInitialList: true },
  u: { type: 'update', oldObj: a1, obj: a2 },
  d: { type: 'delete', obj: a2 },
  t: { type: 'delete', obj: new DeletedFinalStateUnknown('ns/b', b1) },
  e: { type: 'delete', obj: new DeletedFinalStateUnknown<Obj>('ns/c', undefined) },
} satisfies Record<string, InformerEvent<Obj>>;

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('touchedObjects', () => {
  it('emits the object of every add, update and delete', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<Obj>>('a-u-d-|', events);
      expectObservable(source.pipe(touchedObjects())).toBe('x-y-y-|', { x: a1, y: a2 });
    });
  });

  it('unwraps a tombstone to its last state and skips a tombstone without one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<Obj>>('t-e-a|', events);
      expectObservable(source.pipe(touchedObjects())).toBe('z---x|', { z: b1, x: a1 });
    });
  });

  it('forwards an error after the objects that preceded it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<Obj>>('a-e-#', events, new Error('boom'));
      expectObservable(source.pipe(touchedObjects())).toBe('x---#', { x: a1 }, new Error('boom'));
    });
  });

  it('unsubscribes from the source when the consumer unsubscribes early', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<InformerEvent<Obj>>('a-u-d-|', events);
      expectObservable(source.pipe(touchedObjects()), '^--!').toBe('x-y', { x: a1, y: a2 });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('releases its source subscription on completion', () => {
    const source = new Subject<InformerEvent<Obj>>();
    const sub = source.pipe(touchedObjects()).subscribe();
    expect(source.observed).toBe(true);
    source.complete();
    expect(sub.closed).toBe(true);
    expect(source.observed).toBe(false);
  });
});
