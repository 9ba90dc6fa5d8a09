import { Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { appliedObjects } from '../../src/operators/appliedObjects.js';
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
  b: { type: 'add', obj: b1, isInInitialList: false },
} satisfies Record<string, InformerEvent<Obj>>;

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('appliedObjects', () => {
  it('emits the object of adds and updates and drops deletes, tombstones included', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<Obj>>('a-u-d-b-t-|', events);
      expectObservable(source.pipe(appliedObjects())).toBe('x-y---z---|', { x: a1, y: a2, z: b1 });
    });
  });

  it('emits the new object of an update, not the old one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<InformerEvent<Obj>>('u|', events).pipe(appliedObjects())).toBe('y|', { y: a2 });
    });
  });

  it('forwards an error after the objects that preceded it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<InformerEvent<Obj>>('a-d-#', events, new Error('boom'));
      expectObservable(source.pipe(appliedObjects())).toBe('x---#', { x: a1 }, new Error('boom'));
    });
  });

  it('unsubscribes from the source when the consumer unsubscribes early', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<InformerEvent<Obj>>('a-u-b-|', events);
      expectObservable(source.pipe(appliedObjects()), '^--!').toBe('x-y', { x: a1, y: a2 });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('releases its source subscription on completion', () => {
    const source = new Subject<InformerEvent<Obj>>();
    const seen: Obj[] = [];
    const sub = source.pipe(appliedObjects()).subscribe((o) => seen.push(o));
    source.next(events.a);
    expect(source.observed).toBe(true);
    source.complete();
    expect(sub.closed).toBe(true);
    expect(source.observed).toBe(false);
    expect(seen).toEqual([a1]);
  });
});
