import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown, type KubeObject } from 'rxkube';
import { isSubsequence, storeDiff, View } from './views.js';
import { createIndexer } from 'rxkube/core';

const pod = (name: string, rv: string, uid = `uid-${name}`): KubeObject => ({ metadata: { name, namespace: 'default', resourceVersion: rv, uid } });

// The chaos suite is only as good as its checks: each must catch what it is there to catch.
describe('chaos checks', () => {
  it('a view replays adds, updates and deletes and finds what differs from the server', () => {
    const view = new View('v', 'unbounded');
    view.apply({ type: 'add', obj: pod('a', '1'), isInInitialList: true });
    view.apply({ type: 'add', obj: pod('b', '2'), isInInitialList: true });
    view.apply({ type: 'update', oldObj: pod('a', '1'), obj: pod('a', '3') });
    view.apply({ type: 'delete', obj: new DeletedFinalStateUnknown('default/b', pod('b', '2')) });
    expect(view.breaches()).toEqual([]);
    expect(view.diff(new Map([['default/a', '3']]))).toEqual([]);
    expect(view.diff(new Map([['default/a', '4'], ['default/c', '5']]))).toEqual(['default/a at rv 3, server rv 4', 'default/c missing (server rv 5)']);
  });

  it('a view reports an update or delete of a key it never saw, an add of a key it holds, and a stale old object', () => {
    const view = new View('v', 'coalesce');
    view.apply({ type: 'update', oldObj: pod('a', '1'), obj: pod('a', '2') });
    view.apply({ type: 'add', obj: pod('a', '3'), isInInitialList: false });
    view.apply({ type: 'update', oldObj: pod('a', '1'), obj: pod('a', '4') });
    view.apply({ type: 'delete', obj: pod('z', '5') });
    expect(view.breaches()).toEqual([
      'v: update of default/a (rv 2), which it never saw added',
      'v: add of default/a (rv 3) while it holds rv 2',
      'v: update of default/a whose old object has rv 1, but it last saw rv 3',
      'v: delete of default/z, which it never saw added',
    ]);
  });

  it('a dropOldest view is excused only on keys reported dropped', () => {
    const view = new View('v', 'dropOldest');
    view.apply({ type: 'update', oldObj: pod('a', '1'), obj: pod('a', '2') });
    view.apply({ type: 'update', oldObj: pod('b', '1'), obj: pod('b', '2') });
    expect(view.breaches(new Set(['default/a']))).toEqual(['v: update of default/b (rv 2), which it never saw added']);
  });

  it('an observer view checks each event against the store it was given', () => {
    const store = createIndexer<KubeObject>();
    store.add(pod('a', '1'));
    const view = new View('o', 'observer', store);
    view.apply({ type: 'add', obj: pod('a', '1'), isInInitialList: true });
    view.apply({ type: 'update', oldObj: pod('a', '1'), obj: pod('a', '2') });
    view.apply({ type: 'delete', obj: pod('a', '2') });
    expect(view.breaches()).toEqual(['o: update of default/a rv 2 while the store holds rv 1', 'o: delete of default/a while the store still holds it']);
  });

  it('storeDiff finds missing, extra and stale keys', () => {
    const store = createIndexer<KubeObject>();
    store.add(pod('a', '1'));
    store.add(pod('b', '2'));
    expect(storeDiff(store, new Map([['default/a', '1'], ['default/b', '2']]))).toEqual([]);
    expect(storeDiff(store, new Map([['default/a', '9'], ['default/c', '3']])).sort()).toEqual(['default/a at rv 1, server rv 9', 'default/b (rv 2) not on the server', 'default/c missing (server rv 3)']);
  });

  it('isSubsequence accepts left-out entries and refuses reordered or invented ones', () => {
    expect(isSubsequence(['a', 'c'], ['a', 'b', 'c'])).toBe(true);
    expect(isSubsequence(['c', 'a'], ['a', 'b', 'c'])).toBe(false);
    expect(isSubsequence(['d'], ['a', 'b', 'c'])).toBe(false);
  });
});
