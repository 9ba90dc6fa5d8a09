import { Observable, type OperatorFunction } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { reportError } from '../errors/reportError.js';
import type { InformerEvent } from './informerEvent.js';
import { unwrapTombstone, type DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { deletionHandlingMetaNamespaceKey } from '../store/keys.js';
import type { KubeObject } from '../store/types.js';
import { ownerPointers, resolveOwnerOptions, type OwnerKeysOptions, type OwnerPointer } from './ownerKeys.js';
import { describeValue } from '../options/validate.js';

/**
 * One child paired with one owner.
 * - `upsert`: this is now the pair for `ownerKey`; replace any earlier one
 *   for the same child and owner key.
 * - `remove`: the child no longer belongs to `ownerKey` (it was deleted, or
 *   an update re-parented or released it); `child` is its last known state.
 *
 * `owner` is the owner store's current object for `ownerKey`, or `undefined`
 * when the store has none or holds a different object under that name (its
 * UID differs from the one the child's owner reference names).
 */
export type OwnerJoin<C, O> =
  | { readonly type: 'upsert'; readonly ownerKey: string; readonly child: C; readonly owner: O | undefined }
  | { readonly type: 'remove'; readonly ownerKey: string; readonly child: C; readonly owner: O | undefined };

/** What the join remembers about one child it has paired. */
interface Joined<C> {
  readonly child: C;
  /** Owner key → the UID the child's reference names, to tell a re-created owner from the real one. */
  readonly owners: ReadonlyMap<string, string>;
}

/**
 * Pairs each child with its owner from the owner informer's store, and pairs
 * every known child again whenever its owner changes — for instance each pod
 * with its ReplicaSet, kept current as either side changes.
 *
 * The input is the child informer's events; the owner informer is
 * subscribed alongside it. What is emitted:
 * - child add / update: a `remove` for each owner the child no longer points
 *   at, then an `upsert` for each owner it points at;
 * - child delete: a `remove` for each owner it was paired with, or else
 *   each owner its last state points at (a tombstone without a last state
 *   uses the state the join saw last, and yields nothing if it saw none);
 * - owner add / update / delete: an `upsert` for every known child of that
 *   owner, with the owner as the store now has it (`undefined` after a
 *   delete).
 *
 * Owners are looked up by `namespace/name` (see `OwnerKeysOptions.namespaced`),
 * so the owner store must use the default key function.
 *
 * A child whose owner is not in the store yet is still emitted, with
 * `owner: undefined`; it is emitted again when the owner arrives. The join
 * keeps an index of owner key → child keys (and each child's newest state)
 * for the children that point at a matching owner, dropped on child delete,
 * so its memory follows the live children. It completes when the child
 * stream completes; the end of the owner stream only stops owner-driven
 * re-emission. An error on either stream is forwarded. To skip owner updates
 * that change nothing relevant, pass `Object.assign(rs.pipe(predicateFilter(…)), { store: rs.store })`.
 * A child without a name, or an owner store that throws, is reported through
 * rxkube's error reporter (`setErrorReporter`) as a `CallbackError`; the join keeps running.
 *
 * ## Example
 * ```ts
 * import { informer, joinOwner, kubeSource } from 'rxkube';
 * import type { V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const pods = informer(kubeSource(kc, 'v1/pods'));
 * const replicaSets = informer(kubeSource(kc, 'apps/v1/replicasets'));
 * pods
 *   .pipe(joinOwner(replicaSets, { kind: 'ReplicaSet' }))
 *   .subscribe(({ type, child, owner }) =>
 *     console.log(type, child.metadata?.name, 'of', owner?.metadata?.name ?? '(owner not cached)'),
 *   );
 * ```
 *
 * @param owner the owner informer, or anything that is a stream of owner changes (emitted after its store
 *   applied them) with a `store` whose `getByKey(key)` reads the owner's current state.
 * @param options which owner references count; see `OwnerKeysOptions`
 *   (`kind`, `apiVersion`, `controllerOnly` @default true, `namespaced` @default true).
 * @returns an operator from the child's `InformerEvent<C>` to `OwnerJoin<C, O>`.
 * @throws {TypeError} when `owner` is not an Observable with a `store.getByKey` function, or an option is invalid.
 */
export function joinOwner<C extends KubeObject, O extends KubeObject>(
  owner: Observable<InformerEvent<O>> & { readonly store: { getByKey(key: string): O | undefined } },
  options?: OwnerKeysOptions,
): OperatorFunction<InformerEvent<C>, OwnerJoin<C, O>> {
  if (typeof owner !== 'object' || owner === null) {
    throw new TypeError(`joinOwner: owner must be an object (an informer) with a store, got ${describeValue(owner)}`);
  }
  if (typeof owner.store?.getByKey !== 'function') {
    throw new TypeError(`joinOwner: owner.store must have a getByKey function, got ${describeValue(owner.store)}`);
  }
  if (typeof owner.subscribe !== 'function') {
    throw new TypeError(`joinOwner: owner must be an Observable of owner events (an informer), got ${describeValue(owner)}`);
  }
  const resolved = resolveOwnerOptions('joinOwner', options);
  const { store } = owner;
  const events$: Observable<InformerEvent<O>> = owner;

  const lookup = (pointer: OwnerPointer): O | undefined => {
    let found: O | undefined;
    try {
      found = store.getByKey(pointer.key);
    } catch (error) {
      report(`owner.store.getByKey(${JSON.stringify(pointer.key)}) threw, the owner is treated as absent`, error);
      return undefined;
    }
    const uid = found?.metadata?.uid;
    // Same name, other object: the owner the child names is gone, whatever now has its name.
    return uid !== undefined && pointer.uid !== undefined && uid !== pointer.uid ? undefined : found;
  };

  return (children$) =>
    new Observable<OwnerJoin<C, O>>((subscriber) => {
      // Child key → the child's newest state and the owners it is paired with.
      const joined = new Map<string, Joined<C>>();
      // Owner key → keys of its paired children, to find them when the owner changes.
      const byOwner = new Map<string, Set<string>>();

      const emit = (type: OwnerJoin<C, O>['type'], ownerKey: string, uid: string, child: C): void => {
        subscriber.next({ type, ownerKey, child, owner: lookup({ key: ownerKey, uid }) });
      };

      const unindex = (childKey: string, ownerKey: string): void => {
        const keys = byOwner.get(ownerKey);
        keys?.delete(childKey);
        if (keys?.size === 0) byOwner.delete(ownerKey);
      };

      const upsertChild = (child: C): void => {
        const childKey = keyOf(child);
        if (childKey === undefined) return;
        const previous = joined.get(childKey);
        const owners = new Map(ownerPointers(child, resolved).map((pointer) => [pointer.key, pointer.uid]));
        for (const [ownerKey, uid] of previous?.owners ?? []) {
          if (owners.has(ownerKey)) continue;
          unindex(childKey, ownerKey);
          emit('remove', ownerKey, uid, child);
        }
        if (owners.size === 0) {
          joined.delete(childKey);
          return;
        }
        joined.set(childKey, { child, owners });
        for (const [ownerKey, uid] of owners) {
          let keys = byOwner.get(ownerKey);
          if (keys === undefined) byOwner.set(ownerKey, (keys = new Set()));
          keys.add(childKey);
          emit('upsert', ownerKey, uid, child);
        }
      };

      const deleteChild = (deleted: C | DeletedFinalStateUnknown<C>): void => {
        const childKey = keyOf(deleted);
        if (childKey === undefined) return;
        const previous = joined.get(childKey);
        joined.delete(childKey);
        const child = unwrapTombstone(deleted) ?? previous?.child;
        if (child === undefined) return;
        const owners =
          previous?.owners ?? new Map(ownerPointers(child, resolved).map((pointer) => [pointer.key, pointer.uid]));
        for (const [ownerKey, uid] of owners) {
          unindex(childKey, ownerKey);
          emit('remove', ownerKey, uid, child);
        }
      };

      const ownerChanged = (event: InformerEvent<O>): void => {
        const ownerKey = keyOf(event.obj);
        if (ownerKey === undefined) return;
        // Copied: a subscriber reacting synchronously must not change the set under iteration.
        for (const childKey of [...(byOwner.get(ownerKey) ?? [])]) {
          const entry = joined.get(childKey);
          const uid = entry?.owners.get(ownerKey);
          if (entry !== undefined && uid !== undefined) emit('upsert', ownerKey, uid, entry.child);
        }
      };

      const ownerSubscription = events$.subscribe({
        next: ownerChanged,
        error: (error: unknown) => subscriber.error(error),
      });
      const childSubscription = children$.subscribe({
        next: (event) => (event.type === 'delete' ? deleteChild(event.obj) : upsertChild(event.obj)),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });

      return () => {
        childSubscription.unsubscribe();
        ownerSubscription.unsubscribe();
        joined.clear();
        byOwner.clear();
      };
    });
}

function keyOf(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): string | undefined {
  try {
    return deletionHandlingMetaNamespaceKey(obj);
  } catch (error) {
    report('an object without metadata.name cannot be joined and was skipped', error);
    return undefined;
  }
}

function report(what: string, error: unknown): void {
  reportError(new CallbackError('joinOwner', what, error));
}
