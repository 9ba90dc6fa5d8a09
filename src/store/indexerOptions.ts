// The options of createIndexer and of a store's list(): their shape and the
// checks that refuse unknown or mistyped ones. Internal, except the
// IndexerOptions type (re-exported by indexer.ts).

import { metaNamespaceKey } from './keys.js';
import type { Indexers, KeyFunc, StoreListOptions } from './types.js';
import { booleanOption, checkOptionNames, describeValue, functionOption, optionNames } from '../options/validate.js';

/** Options of {@link createIndexer}. */
export interface IndexerOptions<T> {
  /**
   * Computes the key of an object.
   * @default metaNamespaceKey ("namespace/name", or "name" when cluster-scoped)
   */
  readonly keyFunc?: KeyFunc<T>;
  /**
   * Named index functions to maintain from the start.
   * @default {} (no index)
   */
  readonly indexers?: Indexers<T>;
  /**
   * Deep-freeze every stored object in place (no copy), so code that reads
   * the store cannot corrupt it. Turn off only if you never mutate what you
   * read and want to skip the (small, once per object) freezing cost.
   * @default true
   */
  readonly freeze?: boolean;
}

const OPTION_NAMES = optionNames<IndexerOptions<unknown>>({ keyFunc: true, indexers: true, freeze: true });
const LIST_OPTION_NAMES = optionNames<StoreListOptions>({ labelSelector: true, fieldSelector: true, namespace: true });

export function checkIndexers<T>(indexers: unknown, where: string): Indexers<T> {
  if (indexers === null || typeof indexers !== 'object' || Array.isArray(indexers)) {
    throw new TypeError(`${where}: indexers must be an object of index functions, got ${describeValue(indexers)}`);
  }
  for (const [name, fn] of Object.entries(indexers)) {
    if (typeof fn !== 'function') throw new TypeError(`${where}: indexers[${JSON.stringify(name)}] must be a function, got ${describeValue(fn)}`);
  }
  return indexers as Indexers<T>;
}

/** createIndexer's options, checked and with their defaults filled in; throws TypeError. */
export function checkIndexerOptions<T>(opts: IndexerOptions<T> | undefined): Required<IndexerOptions<T>> {
  if (opts === undefined) return { keyFunc: metaNamespaceKey as KeyFunc<T>, indexers: {}, freeze: true };
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new TypeError(`createIndexer: options must be an object, got ${describeValue(opts)}`);
  checkOptionNames('createIndexer', opts, OPTION_NAMES);
  const keyFunc = functionOption<KeyFunc<T>>('createIndexer', 'keyFunc', opts.keyFunc);
  const freeze = booleanOption('createIndexer', 'freeze', opts.freeze, true);
  const checked = opts.indexers === undefined ? {} : checkIndexers<T>(opts.indexers, 'createIndexer');
  return { keyFunc: keyFunc ?? (metaNamespaceKey as KeyFunc<T>), indexers: checked, freeze };
}

/** Refuses list() options that are not an object or name an unknown option; throws TypeError. */
export function checkListOptionNames(opts: unknown): void {
  checkOptionNames('list', opts, LIST_OPTION_NAMES);
}
