/**
 * The minimal shape rxkube needs from a Kubernetes object. Every object the
 * API server returns has it; custom resources included.
 */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
}

/**
 * The metadata fields rxkube reads. Everything else is carried untouched.
 * There is deliberately no index signature: classes such as client-node's
 * `V1ObjectMeta` have none, and one here would make `V1Pod` unassignable to
 * `KubeObject`.
 */
export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
  readonly deletionTimestamp?: string | Date;
  readonly creationTimestamp?: string | Date;
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

/** Computes the store key of an object (`"ns/name"` or `"name"` by default). */
export type KeyFunc<T> = (obj: T) => string;

/** Computes the values an object is indexed under; zero, one or many. */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** Named index functions: `indexName → IndexFunc`. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/**
 * The read side of a store that deltaFifo needs to infer deletions and
 * resyncs (client-go's `KeyListerGetter`).
 */
export interface KeyListerGetter<T> {
  listKeys(): readonly string[] | Iterable<string>;
  getByKey(key: string): T | undefined;
}
