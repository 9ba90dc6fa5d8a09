import { ownerPointers } from '../operators/ownerKeys.js';
import type { KubeObject } from '../store/types.js';
import type { LabelWriter } from './labelWriter.js';
import type { ResolvedSharderOptions, ShardingEvent } from './sharderOptions.js';
import { workKey, type WorkKey } from './sharderWork.js';

/**
 * Owned objects (`owns`) follow their controlling owner's shard label, so
 * the two are cached and reconciled by the same replica. Knows each owned
 * object's owner, so that a change of an owner's label re-checks its
 * children.
 */
export class Following<T extends KubeObject> {
  readonly #c: ResolvedSharderOptions<T>;
  readonly #writer: LabelWriter<T>;
  readonly #emit: (event: ShardingEvent) => void;
  /** The `follow` work of each owner's children, by owner key. */
  readonly #children = new Map<string, Set<WorkKey>>();
  /** The owner key of each child's `follow` work. */
  readonly #ownerOf = new Map<WorkKey, string>();

  constructor(c: ResolvedSharderOptions<T>, writer: LabelWriter<T>, emit: (event: ShardingEvent) => void) {
    this.#c = c;
    this.#writer = writer;
    this.#emit = emit;
  }

  /** Records the owner of a child (of `owns[owned]`) as it is now; undefined when it has none or is gone. */
  index(owned: number, key: string, ownerKey: string | undefined): void {
    const item = workKey({ kind: 'follow', owned, key });
    const before = this.#ownerOf.get(item);
    if (before === ownerKey) return;
    if (before !== undefined) {
      const set = this.#children.get(before);
      set?.delete(item);
      if (set?.size === 0) this.#children.delete(before);
    }
    if (ownerKey === undefined) this.#ownerOf.delete(item);
    else {
      this.#ownerOf.set(item, ownerKey);
      this.#children.set(ownerKey, (this.#children.get(ownerKey) ?? new Set()).add(item));
    }
  }

  /** The `follow` work of the children of the owner with key `ownerKey`. */
  childrenOf(ownerKey: string): Iterable<WorkKey> {
    return this.#children.get(ownerKey) ?? [];
  }

  /** An owned object takes the shard label its owner has now; while the owner has none, it keeps its own. */
  async follow(owned: number, key: string, signal: AbortSignal): Promise<void> {
    const c = this.#c;
    const resource = c.owns[owned]!;
    const child = resource.objects.store.getByKey(key);
    if (child?.metadata?.name === undefined) return;
    const pointer = ownerPointers(child, resource.owner)[0];
    if (pointer === undefined) return;
    const owner = c.objects.store.getByKey(pointer.key);
    if (owner === undefined || (pointer.uid !== '' && owner.metadata?.uid !== undefined && owner.metadata.uid !== pointer.uid)) return;
    const target = owner.metadata?.labels?.[c.labels.shard];
    if (target === undefined || target === '' || child.metadata.labels?.[c.labels.shard] === target) return;
    if (await this.#writer.patch(child, { [c.labels.shard]: target }, signal, owned)) this.#emit({ type: 'followed', resource: resource.name, key, shard: target });
  }
}
