import { defer, filter, finalize, type Observable } from 'rxjs';
import { CallbackError } from '../errors/CallbackError.js';
import { reportError } from '../errors/reportError.js';
import type { InformerEvent } from './informerEvent.js';
import { DeletedFinalStateUnknown } from '../store/DeletedFinalStateUnknown.js';
import { metaNamespaceKey } from '../store/keys.js';
import type { KubeObject } from '../store/types.js';
import type { Predicate } from './predicates.js';
import { describeValue } from '../options/validate.js';

/** Marks a predicate that threw: never equal to anything, so the object passes. */
const FAILED: unique symbol = Symbol('predicate failed');

type Values = readonly (ReturnType<Predicate<unknown>> | typeof FAILED)[];

/** What predicateFilter remembers about one store key. */
interface Seen {
  /** The UID the values belong to, so a re-created object with the same name is new. */
  readonly uid: string | undefined;
  readonly values: Values;
}

/**
 * Lets an object through only when the value of at least one predicate
 * changed since the last object seen with the same UID, like kube-runtime's
 * `predicate_filter` and controller-runtime's `GenerationChangedPredicate`
 * family. Use it to skip status-only updates, resyncs and other noise.
 *
 * It works on either kind of stream, and emits what it receives:
 * - **objects** (after `appliedObjects()` / `touchedObjects()`): the first
 *   object of each UID passes, later ones pass when a predicate value
 *   differs from the previous object's. An object stream does not say when
 *   an object is deleted, so what is remembered (one small entry per
 *   `namespace/name`, replaced when the name is re-created with another UID)
 *   is kept for the life of the subscription. Prefer an event stream for
 *   resources with heavy name churn.
 * - **`InformerEvent`s**: adds and updates are judged by their `obj` as
 *   above; an update whose key was never seen (the filter subscribed after
 *   the add) is compared with its `oldObj`. Deletes always pass, and forget
 *   the key, tombstones included, so memory follows the live objects.
 *   A value is an event when it has no `metadata` and a `type` of `add`,
 *   `update` or `delete`; Kubernetes objects always carry `metadata`.
 *
 * With several predicates an object passes when any value changed. When
 * every predicate returns `undefined` (it cannot tell, e.g. `generation` on
 * a pod) the object passes, as kube-runtime does. A predicate that throws is
 * reported through rxkube's error reporter (`setErrorReporter`) as a `CallbackError` and the object passes: a spurious
 * reconcile costs less than a missed change.
 *
 * ## Example
 * ```ts
 * import { appliedObjects, generationChanged, labelsChanged, predicateFilter } from 'rxkube';
 * import type { Informer } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: Informer<V1Deployment>;
 * declare function reconcile(d: V1Deployment): void;
 *
 * // Reconcile deployments on spec or label changes, not on status updates.
 * deployments
 *   .pipe(appliedObjects(), predicateFilter(generationChanged, labelsChanged))
 *   .subscribe((d) => reconcile(d));
 * ```
 *
 * @param predicates one or more functions deriving the value whose change matters
 *   (`generationChanged`, `labelsChanged`, `annotationsChanged`,
 *   `resourceVersionChanged`, or your own).
 * @returns an operator that emits the objects or events that passed, unchanged.
 * @throws {TypeError} when no predicate is given or one is not a function.
 */
export function predicateFilter<T extends KubeObject>(
  ...predicates: Predicate<T>[]
): <S extends T | InformerEvent<T>>(source: Observable<S>) => Observable<S> {
  checkPredicates('predicateFilter: predicates', predicates);
  if (predicates.length === 0) {
    throw new TypeError('predicateFilter: predicates must contain at least one function, got none');
  }
  return filterBy(predicates, reportPredicateError);
}

/**
 * Checks that `predicates` is an array of functions (internal: also the
 * controller's `predicates` options), naming `where` and the bad entry.
 */
export function checkPredicates(where: string, predicates: unknown): asserts predicates is readonly Predicate<never>[] {
  if (!Array.isArray(predicates)) throw new TypeError(`${where} must be an array of predicates, got ${describeValue(predicates)}`);
  predicates.forEach((predicate: unknown, index) => {
    if (typeof predicate !== 'function') {
      throw new TypeError(`${where}[${index}] must be a function, got ${describeValue(predicate)}`);
    }
  });
}

/**
 * {@link predicateFilter} with checked predicates and its own place for what
 * a predicate throws (internal: the controller reports to its `onError`).
 */
export function filterBy<T extends KubeObject>(
  predicates: readonly Predicate<T>[],
  report: (error: unknown) => void,
): <S extends T | InformerEvent<T>>(source: Observable<S>) => Observable<S> {
  const evaluate = (obj: T): Values =>
    predicates.map((predicate) => {
      try {
        return predicate(obj);
      } catch (error) {
        report(error);
        return FAILED;
      }
    });

  return <S extends T | InformerEvent<T>>(source: Observable<S>): Observable<S> =>
    defer(() => {
      // Last values per store key; per subscription so two consumers never share history.
      const seen = new Map<string, Seen>();

      const changed = (obj: T): boolean => {
        const key = keyOf(obj);
        // An object without a name cannot be remembered; let it through rather than guess.
        if (key === undefined) return true;
        const uid = uidOf(obj);
        const values = evaluate(obj);
        const previous = seen.get(key);
        seen.set(key, { uid, values });
        if (values.every((value) => value === undefined) || values.includes(FAILED)) return true;
        return previous === undefined || previous.uid !== uid || !sameValues(previous.values, values);
      };

      const passes = (value: S): boolean => {
        if (!isInformerEvent<T>(value)) return changed(value as T);
        switch (value.type) {
          case 'add':
            return changed(value.obj);
          case 'update': {
            const key = keyOf(value.obj);
            // Subscribed after the add: the old object is the previous state the informer saw.
            if (key !== undefined && !seen.has(key)) {
              seen.set(key, { uid: uidOf(value.oldObj), values: evaluate(value.oldObj) });
            }
            return changed(value.obj);
          }
          case 'delete': {
            const key = value.obj instanceof DeletedFinalStateUnknown ? value.obj.key : keyOf(value.obj);
            if (key !== undefined) seen.delete(key);
            return true;
          }
        }
      };

      return source.pipe(
        filter(passes),
        finalize(() => seen.clear()),
      );
    });
}

/**
 * Tells an `InformerEvent` from a Kubernetes object, which always has `metadata`.
 * @internal shared with debounceByKey; not part of the public surface.
 */
export function isInformerEvent<T>(value: unknown): value is InformerEvent<T> {
  if (typeof value !== 'object' || value === null || 'metadata' in value || !('obj' in value)) return false;
  const type = (value as { type?: unknown }).type;
  return type === 'add' || type === 'update' || type === 'delete';
}

function keyOf(obj: KubeObject): string | undefined {
  try {
    return metaNamespaceKey(obj);
  } catch {
    return undefined;
  }
}

// Optional access throughout: a throw here would end the consumer's stream (an update without oldObj breaks the type, yet may come).
function uidOf(obj: KubeObject | undefined): string | undefined {
  return obj?.metadata?.uid;
}

function sameValues(a: Values, b: Values): boolean {
  return a.length === b.length && a.every((value, index) => Object.is(value, b[index]));
}

function reportPredicateError(error: unknown): void {
  reportError(predicateError('predicateFilter', error));
}

/** What a predicate that threw is reported as (internal). */
export function predicateError(where: string, error: unknown): CallbackError {
  return new CallbackError(where, 'a predicate threw, the object was let through', error);
}
