import fc from 'fast-check';
import { NEVER, Observable, Subject, tap } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallbackError } from '../../src/errors/CallbackError.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { joinOwner, type OwnerJoin } from '../../src/operators/joinOwner.js';
import { DeletedFinalStateUnknown } from '../../src/store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../../src/store/types.js';

type Ev = InformerEvent<KubeObject>;

const rs = (name: string, rv = '1', uid = `uid-${name}`): KubeObject => ({
  metadata: { namespace: 'ns', name, uid, resourceVersion: rv },
});
const pod = (name: string, ...owners: string[]): KubeObject => ({
  metadata: {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    ownerReferences: owners.map((owner) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: owner,
      uid: `uid-${owner}`,
      controller: true,
    })),
  },
});
const add = (obj: KubeObject): Ev => ({ type: 'add', obj, isInInitialList: false });
const update = (oldObj: KubeObject, obj: KubeObject): Ev => ({ type: 'update', oldObj, obj });
const del = (obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): Ev => ({ type: 'delete', obj });

const upsert = (ownerKey: string, child: KubeObject, owner: KubeObject | undefined): OwnerJoin<KubeObject, KubeObject> => ({
  type: 'upsert',
  ownerKey,
  child,
  owner,
});
const remove = (ownerKey: string, child: KubeObject, owner: KubeObject | undefined): OwnerJoin<KubeObject, KubeObject> => ({
  type: 'remove',
  ownerKey,
  child,
  owner,
});

/**
 * An owner informer stand-in: its store applies each event before the event
 * is emitted, as the informer contract says.
 */
function ownerInformer(events: Observable<Ev>, initial: KubeObject[] = []) {
  const objects = new Map(initial.map((o) => [`ns/${o.metadata?.name}`, o]));
  const events$ = events.pipe(
    tap((event) => {
      const obj = event.obj instanceof DeletedFinalStateUnknown ? event.obj.obj : event.obj;
      const key = event.obj instanceof DeletedFinalStateUnknown ? event.obj.key : `ns/${obj?.metadata?.name}`;
      if (event.type === 'delete') objects.delete(key);
      else objects.set(key, event.obj as KubeObject);
    }),
  );
  return Object.assign(events$, { store: { getByKey: (key: string) => objects.get(key) } });
}

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

afterEach(() => {
  vi.restoreAllMocks();
  setErrorReporter(undefined);
});

describe('joinOwner', () => {
  const a1 = rs('a', '1');
  const a2 = rs('a', '2');
  const b1 = rs('b', '1');
  const p1 = pod('p1', 'a');
  const p2 = pod('p2', 'a');

  it('pairs each child with its owner from the store', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const owners = ownerInformer(NEVER, [a1, b1]);
      const children = cold<Ev>('x-y|', { x: add(p1), y: add(pod('p3', 'b')) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('x-y|', {
        x: upsert('ns/a', p1, a1),
        y: upsert('ns/b', pod('p3', 'b'), b1),
      });
    });
  });

  it('emits a child whose owner is not cached yet, and again when the owner arrives', () => {
    scheduler().run(({ hot, cold, expectObservable }) => {
      const owners = ownerInformer(hot<Ev>('--a', { a: add(a1) }));
      const children = cold<Ev>('x---', { x: add(p1) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('x-y-', {
        x: upsert('ns/a', p1, undefined),
        y: upsert('ns/a', p1, a1),
      });
    });
  });

  it("re-emits every known child when its owner changes, and nothing for another owner's change", () => {
    scheduler().run(({ hot, cold, expectObservable }) => {
      const owners = ownerInformer(hot<Ev>('----u-b', { u: update(a1, a2), b: update(b1, b1) }), [a1, b1]);
      const children = cold<Ev>('xy-----', { x: add(p1), y: add(p2) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('xy--(uv)', {
        x: upsert('ns/a', p1, a1),
        y: upsert('ns/a', p2, a1),
        u: upsert('ns/a', p1, a2),
        v: upsert('ns/a', p2, a2),
      });
    });
  });

  it('removes a re-parented child from its old owner and pairs it with the new one', () => {
    const moved = pod('p1', 'b');
    scheduler().run(({ hot, cold, expectObservable }) => {
      const owners = ownerInformer(hot<Ev>('------a-b', { a: update(a1, a2), b: update(b1, b1) }), [a1, b1]);
      const children = cold<Ev>('x-m------', { x: add(p1), m: update(p1, moved) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('x-(rm)--b', {
        x: upsert('ns/a', p1, a1),
        r: remove('ns/a', moved, a1),
        m: upsert('ns/b', moved, b1),
        b: upsert('ns/b', moved, b1),
      });
    });
  });

  it('removes a released child and forgets it', () => {
    const released = pod('p1');
    scheduler().run(({ hot, cold, expectObservable }) => {
      const owners = ownerInformer(hot<Ev>('----a', { a: update(a1, a2) }), [a1]);
      const children = cold<Ev>('x-r--', { x: add(p1), r: update(p1, released) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('x-r--', {
        x: upsert('ns/a', p1, a1),
        r: remove('ns/a', released, a1),
      });
    });
  });

  it('removes a deleted child, from a tombstone too, and forgets it', () => {
    scheduler().run(({ hot, cold, expectObservable }) => {
      const owners = ownerInformer(hot<Ev>('-------a', { a: update(a1, a2) }), [a1]);
      const children = cold<Ev>('xy-d-t-', {
        x: add(p1),
        y: add(p2),
        d: del(p1),
        t: del(new DeletedFinalStateUnknown<KubeObject>('ns/p2', undefined)),
      });
      expectObservable(children.pipe(joinOwner(owners))).toBe('xy-d-t-', {
        x: upsert('ns/a', p1, a1),
        y: upsert('ns/a', p2, a1),
        d: remove('ns/a', p1, a1),
        t: remove('ns/a', p2, a1),
      });
    });
  });

  it('treats a child re-created after its delete as new', () => {
    const recreated = pod('p1', 'b');
    scheduler().run(({ cold, expectObservable }) => {
      const owners = ownerInformer(NEVER, [a1, b1]);
      const children = cold<Ev>('x-d-r|', { x: add(p1), d: del(p1), r: add(recreated) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('x-d-r|', {
        x: upsert('ns/a', p1, a1),
        d: remove('ns/a', p1, a1),
        r: upsert('ns/b', recreated, b1),
      });
    });
  });

  it('yields nothing for an unknown child deleted without a last state, or for a child without owners', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const owners = ownerInformer(NEVER, [a1]);
      const children = cold<Ev>('t-o-d|', {
        t: del(new DeletedFinalStateUnknown<KubeObject>('ns/p9', undefined)),
        o: add(pod('orphan')),
        d: del(pod('orphan')),
      });
      expectObservable(children.pipe(joinOwner(owners))).toBe('-----|');
    });
  });

  it('pairs children with no owner once the owner is deleted or re-created under another UID', () => {
    const impostor = rs('a', '9', 'uid-other');
    scheduler().run(({ hot, cold, expectObservable }) => {
      const owners = ownerInformer(hot<Ev>('--d-r', { d: del(a1), r: add(impostor) }), [a1]);
      const children = cold<Ev>('x----', { x: add(p1) });
      expectObservable(children.pipe(joinOwner(owners))).toBe('x-d-r', {
        x: upsert('ns/a', p1, a1),
        d: upsert('ns/a', p1, undefined),
        r: upsert('ns/a', p1, undefined),
      });
    });
  });

  it('pairs a child with each matching owner with controllerOnly: false', () => {
    const shared: KubeObject = {
      metadata: {
        namespace: 'ns',
        name: 'shared',
        uid: 'uid-shared',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: 'uid-a', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: 'uid-b' },
        ],
      },
    };
    scheduler().run(({ cold, expectObservable }) => {
      const owners = ownerInformer(NEVER, [a1, b1]);
      const children = cold<Ev>('(x|)', { x: add(shared) });
      expectObservable(children.pipe(joinOwner(owners, { controllerOnly: false }))).toBe('(ab|)', {
        a: upsert('ns/a', shared, a1),
        b: upsert('ns/b', shared, b1),
      });
      expectObservable(children.pipe(joinOwner(owners))).toBe('(a|)', { a: upsert('ns/a', shared, a1) });
    });
  });

  it('forwards an error from the child stream and from the owner stream', () => {
    scheduler().run(({ hot, cold, expectObservable }) => {
      const quietOwners = ownerInformer(NEVER, [a1]);
      const failingChildren = cold<Ev>('x-#', { x: add(p1) }, new Error('children'));
      expectObservable(failingChildren.pipe(joinOwner(quietOwners))).toBe('x-#', { x: upsert('ns/a', p1, a1) }, new Error('children'));

      const failingOwners = ownerInformer(hot<Ev>('---#', {}, new Error('owners')), [a1]);
      const children = cold<Ev>('x-----', { x: add(p1) });
      expectObservable(children.pipe(joinOwner(failingOwners))).toBe('x--#', { x: upsert('ns/a', p1, a1) }, new Error('owners'));
    });
  });

  it('completes with the child stream and keeps joining after the owner stream ends', () => {
    scheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const ownerEvents = hot<Ev>('-|', {});
      const children = cold<Ev>('--x-|', { x: add(p1) });
      expectObservable(children.pipe(joinOwner(ownerInformer(ownerEvents, [a1])))).toBe('--x-|', {
        x: upsert('ns/a', p1, a1),
      });
      expectSubscriptions(ownerEvents.subscriptions).toBe('^!');
    });
  });

  it('releases both subscriptions when the consumer unsubscribes early', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const ownerEvents = hot<Ev>('----a-', { a: update(a1, a2) });
      const children = hot<Ev>('x-----y|', { x: add(p1), y: add(p2) });
      expectObservable(children.pipe(joinOwner(ownerInformer(ownerEvents, [a1]))), '^--!').toBe('x--', {
        x: upsert('ns/a', p1, a1),
      });
      expectSubscriptions(children.subscriptions).toBe('^--!');
      expectSubscriptions(ownerEvents.subscriptions).toBe('^--!');
    });
  });

  it('releases the owner subscription on completion', () => {
    const ownerEvents = new Subject<Ev>();
    const children = new Subject<Ev>();
    const sub = children.pipe(joinOwner(ownerInformer(ownerEvents, [a1]))).subscribe();
    expect(ownerEvents.observed).toBe(true);
    children.complete();
    expect(sub.closed).toBe(true);
    expect(ownerEvents.observed).toBe(false);
  });

  it('reports an owner store that throws and pairs the child with no owner', () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    const broken = Object.assign(new Observable<Ev>(), {
      store: {
        getByKey: (): KubeObject | undefined => {
          throw new Error('store exploded');
        },
      },
    });
    const seen: OwnerJoin<KubeObject, KubeObject>[] = [];
    const children = new Subject<Ev>();
    children.pipe(joinOwner(broken)).subscribe((join) => seen.push(join));
    children.next(add(p1));
    children.next(add(p2));
    expect(seen).toEqual([upsert('ns/a', p1, undefined), upsert('ns/a', p2, undefined)]);
    expect(reported).toHaveLength(2);
    expect(reported.every((e) => e instanceof CallbackError && e.operator === 'joinOwner')).toBe(true);
    expect(String(reported[0]?.message)).toContain('store exploded');
  });

  it('rejects an owner that is not an Observable with a store, and bad options', () => {
    const owners = ownerInformer(NEVER);
    expect(() => joinOwner(undefined as never)).toThrow(/owner must be an object/);
    expect(() => joinOwner(new Observable() as never)).toThrow(/owner\.store/);
    expect(() => joinOwner({ store: owners.store } as never)).toThrow(/owner must be an Observable/);
    expect(() => joinOwner(owners, { kind: 42 as never })).toThrow(/joinOwner: options\.kind.*42/);
  });
});

describe('joinOwner property', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), child: fc.nat(4), owner: fc.option(fc.nat(2), { nil: undefined }) }),
    fc.record({ kind: fc.constantFrom('delete' as const, 'tombstone' as const, 'emptyTombstone' as const), child: fc.nat(4) }),
    fc.record({ kind: fc.constant('ownerUpdate' as const), owner: fc.nat(2) }),
  );

  it('folding upserts and removes always gives each owner exactly its live children, with the current owner', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const ownerStore = new Map<string, KubeObject>([0, 1, 2].map((i) => [`ns/rs${i}`, rs(`rs${i}`, '0')]));
        const ownerEvents = new Subject<Ev>();
        const childEvents = new Subject<Ev>();
        const live = new Map<string, KubeObject>();
        const groups = new Map<string, Map<string, { child: KubeObject; owner: KubeObject | undefined }>>();
        childEvents
          .pipe(joinOwner(Object.assign(ownerEvents.asObservable(), { store: { getByKey: (k: string) => ownerStore.get(k) } })))
          .subscribe((join) => {
            const group = groups.get(join.ownerKey) ?? new Map();
            const childKey = `ns/${join.child.metadata?.name}`;
            if (join.type === 'upsert') group.set(childKey, { child: join.child, owner: join.owner });
            else group.delete(childKey);
            groups.set(join.ownerKey, group);
          });

        let version = 0;
        for (const step of ops) {
          version++;
          if (step.kind === 'ownerUpdate') {
            const key = `ns/rs${step.owner}`;
            const old = ownerStore.get(key) as KubeObject;
            const next = rs(`rs${step.owner}`, String(version));
            ownerStore.set(key, next);
            ownerEvents.next(update(old, next));
            continue;
          }
          const name = `p${step.child}`;
          const key = `ns/${name}`;
          const current = live.get(key);
          if (step.kind === 'set') {
            const next: KubeObject = {
              ...(step.owner === undefined ? pod(name) : pod(name, `rs${step.owner}`)),
              spec: { version },
            } as KubeObject;
            live.set(key, next);
            childEvents.next(current === undefined ? add(next) : update(current, next));
          } else if (current !== undefined) {
            live.delete(key);
            if (step.kind === 'delete') childEvents.next(del(current));
            else if (step.kind === 'tombstone') childEvents.next(del(new DeletedFinalStateUnknown(key, current)));
            else childEvents.next(del(new DeletedFinalStateUnknown<KubeObject>(key, undefined)));
          }
        }

        const expected = new Map<string, Map<string, { child: KubeObject; owner: KubeObject | undefined }>>();
        for (const [key, child] of live) {
          const ownerName = child.metadata?.ownerReferences?.[0]?.name;
          if (ownerName === undefined) continue;
          const ownerKey = `ns/${ownerName}`;
          const group = expected.get(ownerKey) ?? new Map();
          group.set(key, { child, owner: ownerStore.get(ownerKey) });
          expected.set(ownerKey, group);
        }
        const nonEmpty = new Map([...groups].filter(([, group]) => group.size > 0));
        expect(nonEmpty).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
