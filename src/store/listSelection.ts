// How a store's list() picks its objects: by namespace, through the namespace
// index when the store has the standard one, and by label and field selector.
// Internal.

import { byNamespace, namespaceIndex } from './indexFuncs.js';
import type { IndexState } from './indexBuckets.js';
import { checkListOptionNames } from './indexerOptions.js';
import { objectsIn } from './indexQueries.js';
import type { SelectorCache } from './selectorCache.js';
import type { KubeObject, StoreListOptions } from './types.js';
import { describeValue } from '../options/validate.js';

/** The namespace of an object, `""` when it has none. */
function namespaceOf(obj: unknown): string {
  const ns = (obj as KubeObject | null | undefined)?.metadata?.namespace;
  return typeof ns === 'string' ? ns : '';
}

/**
 * The objects of `items` that `opts` selects, in the order list() gives them;
 * `byName` is the store's indexes by name. Throws TypeError on a bad option.
 */
export function selectObjects<T>(items: Map<string, T>, byName: ReadonlyMap<string, IndexState<T>>, opts: StoreListOptions, selectors: SelectorCache): T[] {
  checkListOptionNames(opts);
  const label = selectors.label(opts.labelSelector);
  const field = selectors.field(opts.fieldSelector);
  const ns = opts.namespace;
  if (ns !== undefined && typeof ns !== 'string') throw new TypeError(`list: option "namespace" must be a string, got ${describeValue(ns)}`);

  let source: Iterable<T>;
  let checkNamespace = false;
  if (ns === undefined || ns === '') source = items.values();
  else {
    const nsIndex = byName.get(namespaceIndex);
    if (nsIndex !== undefined && nsIndex.fn === (byNamespace as unknown)) source = objectsIn(nsIndex, ns, items);
    else {
      source = items.values();
      checkNamespace = true;
    }
  }
  if (label === undefined && field === undefined && !checkNamespace) return Array.isArray(source) ? source : Array.from(source);
  const out: T[] = [];
  for (const obj of source) {
    if (checkNamespace && namespaceOf(obj) !== ns) continue;
    if (label !== undefined && !label.matches((obj as KubeObject | null | undefined)?.metadata?.labels)) continue;
    if (field !== undefined && !field.matches(obj)) continue;
    out.push(obj);
  }
  return out;
}
