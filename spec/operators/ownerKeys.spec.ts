import { Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { ownerKeys } from '../../src/operators/ownerKeys.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject, OwnerReference } from '../../src/store/types.js';

const ref = (kind: string, name: string, controller?: boolean, apiVersion = 'apps/v1'): OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid: `uid-${name}`,
  ...(controller === undefined ? {} : { controller }),
});
const pod = (name: string, ...ownerReferences: OwnerReference[]): KubeObject => ({
  metadata: { namespace: 'ns', name, uid: `uid-${name}`, ownerReferences },
});

const rsA = ref('ReplicaSet', 'rs-a', true);
const rsB = ref('ReplicaSet', 'rs-b', true);
const p1 = pod('p1', rsA);
const p1b = pod('p1', rsB);
const p2 = pod('p2', rsA);
const orphan = pod('orphan');

type Ev = InformerEvent<KubeObject>;
const add = (obj: KubeObject): Ev => ({ type: 'add', obj, isInInitialList: false });
const update = (oldObj: KubeObject, obj: KubeObject): Ev => ({ type: 'update', oldObj, obj });
const del = (obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): Ev => ({ type: 'delete', obj });

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('ownerKeys', () => {
  it("maps adds, updates and deletes to the controller owner's namespace/name", () => {
    const events = { a: add(p1), u: update(p1, p1), b: add(p2), d: del(p2) };
    scheduler().run(({ cold, expectObservable }) => {
      const keys = cold<Ev>('a-u-b-d|', events).pipe(ownerKeys({ kind: 'ReplicaSet', apiVersion: 'apps/v1' }));
      expectObservable(keys).toBe('a-a-a-a|', { a: 'ns/rs-a' });
    });
  });

  it('emits the old and the new owner when an update re-parents the child', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const keys = cold<Ev>('(u|)', { u: update(p1, p1b) }).pipe(ownerKeys());
      expectObservable(keys).toBe('(ab|)', { a: 'ns/rs-a', b: 'ns/rs-b' });
    });
  });

  it('emits the old owner when an update releases the child', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Ev>('u|', { u: update(p1, orphan) }).pipe(ownerKeys())).toBe('a|', { a: 'ns/rs-a' });
    });
  });

  it("uses a tombstone's last state and skips a tombstone without one", () => {
    const events = {
      t: del(new DeletedFinalStateUnknown('ns/p1', p1)),
      e: del(new DeletedFinalStateUnknown<KubeObject>('ns/p9', undefined)),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Ev>('e-t|', events).pipe(ownerKeys())).toBe('--a|', { a: 'ns/rs-a' });
    });
  });

  it('yields nothing for children without a matching owner', () => {
    const events = {
      o: add(orphan),
      n: add(pod('n', ref('ReplicaSet', 'not-controller'))),
      f: add(pod('f', ref('ReplicaSet', 'false-controller', false))),
      k: add(pod('k', ref('StatefulSet', 'sts', true))),
      g: add(pod('g', ref('ReplicaSet', 'other-group', true, 'example.com/v1'))),
    };
    scheduler().run(({ cold, expectObservable }) => {
      const keys = cold<Ev>('o-n-f-k-g|', events).pipe(ownerKeys({ kind: 'ReplicaSet', apiVersion: 'apps/v1' }));
      expectObservable(keys).toBe('---------|');
    });
  });

  it('matches the API group and ignores the version, and defaults to any kind and group', () => {
    const events = {
      v: add(pod('v', ref('ReplicaSet', 'old-version', true, 'apps/v1beta2'))),
      c: add(pod('c', ref('Node', 'node-1', true, 'v1'))),
    };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<Ev>('v-c|', events).pipe(ownerKeys({ apiVersion: 'apps/v1' }))).toBe('a--|', {
        a: 'ns/old-version',
      });
      expectObservable(cold<Ev>('v-c|', events).pipe(ownerKeys({ apiVersion: 'v1' }))).toBe('--b|', {
        b: 'ns/node-1',
      });
      expectObservable(cold<Ev>('v-c|', events).pipe(ownerKeys())).toBe('a-b|', { a: 'ns/old-version', b: 'ns/node-1' });
    });
  });

  it('follows every matching owner with controllerOnly: false, each key once', () => {
    const many = pod('m', ref('ConfigMap', 'cm', false, 'v1'), rsA, ref('ReplicaSet', 'rs-a'), ref('Secret', 's', undefined, 'v1'));
    scheduler().run(({ cold, expectObservable }) => {
      const keys = cold<Ev>('(a|)', { a: add(many) }).pipe(ownerKeys({ controllerOnly: false }));
      expectObservable(keys).toBe('(abc|)', { a: 'ns/cm', b: 'ns/rs-a', c: 'ns/s' });
    });
  });

  it('keys cluster-scoped owners by bare name', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const keys = cold<Ev>('a|', { a: add(pod('p', ref('Node', 'node-1', true, 'v1'))) }).pipe(
        ownerKeys({ kind: 'Node', namespaced: false }),
      );
      expectObservable(keys).toBe('a|', { a: 'node-1' });
    });
  });

  it('forwards an error after the keys that preceded it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const keys = cold<Ev>('a-#', { a: add(p1) }, new Error('boom')).pipe(ownerKeys());
      expectObservable(keys).toBe('a-#', { a: 'ns/rs-a' }, new Error('boom'));
    });
  });

  it('unsubscribes from the source when the consumer unsubscribes early', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot<Ev>('a-b-a|', { a: add(p1), b: add(p1b) });
      expectObservable(source.pipe(ownerKeys()), '^--!').toBe('a-b', { a: 'ns/rs-a', b: 'ns/rs-b' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('releases its source subscription on teardown', () => {
    const source = new Subject<Ev>();
    const keys: string[] = [];
    const sub = source.pipe(ownerKeys()).subscribe((key) => keys.push(key));
    source.next(add(p1));
    sub.unsubscribe();
    expect(source.observed).toBe(false);
    expect(keys).toEqual(['ns/rs-a']);
  });

  it('rejects options of the wrong type, naming the option and the value', () => {
    expect(() => ownerKeys({ kind: '' })).toThrow(/options\.kind.*""/);
    expect(() => ownerKeys({ apiVersion: 'apps/v1/extra' })).toThrow(/options\.apiVersion.*apps\/v1\/extra/);
    expect(() => ownerKeys({ controllerOnly: 'yes' as never })).toThrow(/option "controllerOnly" must be a boolean, got "yes"/);
    expect(() => ownerKeys({ namespaced: 1 as never })).toThrow(/option "namespaced" must be a boolean, got 1/);
    expect(() => ownerKeys('ReplicaSet' as never)).toThrow(TypeError);
  });
});
