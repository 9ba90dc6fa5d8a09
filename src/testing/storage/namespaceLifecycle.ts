import type { HistoryEvent } from './history.js';
import type { StoredObject } from './storedObject.js';
import type { ResourceRegistry } from './registry.js';
import type { ResourceType } from './resources.js';
import { conflict, notFound } from '../server/status.js';
import type { Preconditions, Storage } from './storage.js';
import { deleteEvery } from './deleteEvery.js';
import { isRecord } from '../writes/objectRules.js';

/** The resource whose deletion goes through the emulated namespace lifecycle. */
const NAMESPACES = 'v1/namespaces';

type AnyObject = Record<string, unknown>;

function deleting(o: StoredObject): boolean {
  return (o.obj['metadata'] as AnyObject)['deletionTimestamp'] !== undefined;
}

/**
 * Deletion as kube-apiserver and its namespace controller do it: every
 * object is deleted by the storage, except a namespace, which is marked
 * `Terminating` and emptied by an emulated namespace controller on the next
 * tick before it goes itself.
 */
export class NamespaceLifecycle {
  // Where objects are deleted and namespaces marked.
  readonly #storage: Storage;
  // Every namespaced resource the controller empties a namespace of.
  readonly #registry: ResourceRegistry;
  // Namespaces the controller is emptying; a deletion inside one re-checks whether it can go.
  readonly #terminating = new Set<string>();
  // One pending controller pass per namespace, however many deletions asked for it.
  readonly #scheduled = new Set<string>();
  // Set by the server's close(): pending passes then do nothing.
  #stopped = false;
  // Resources whose deletion a controller finishes (CRDs), with the mark their first DELETE sets.
  readonly #marks = new Map<string, (obj: AnyObject) => void>();

  constructor(storage: Storage, registry: ResourceRegistry) {
    this.#storage = storage;
    this.#registry = registry;
  }

  /** Stops the controller for good (the server closed). */
  stop(): void {
    this.#stopped = true;
  }

  /** Called for every write: content with finalizers holds a terminating namespace, and its final deletion lets the namespace go. */
  observe(e: HistoryEvent): void {
    if (e.type === 'DELETED' && e.resource.namespaced && this.#terminating.has(e.cur.namespace)) this.#schedule(e.cur.namespace);
  }

  /**
   * Makes a resource's deletion a mark that a controller acts on (it
   * observes the MODIFIED event), as a CRD's deletion is.
   *
   * @param id the resource.
   * @param mark what the first DELETE changes besides the deletionTimestamp.
   */
  finishedBy(id: string, mark: (obj: AnyObject) => void): void {
    this.#marks.set(id, mark);
  }

  /** Deletes one object, except that a namespace goes through the lifecycle, and resources a controller finishes are marked. */
  delete(type: ResourceType, namespace: string, name: string, preconditions: Preconditions | undefined): StoredObject {
    const mark = this.#marks.get(type.id);
    if (mark !== undefined) {
      const current = this.#storage.get(type, namespace, name);
      if (current === undefined) throw notFound(type, name);
      return deleting(current) ? current : this.#storage.markDeleting(type, namespace, name, preconditions, mark);
    }
    if (type.id !== NAMESPACES) return this.#storage.delete(type, namespace, name, preconditions);
    const current = this.#storage.get(type, '', name);
    if (current === undefined) throw notFound(type, name);
    if (deleting(current)) {
      throw conflict(type, name, 'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.');
    }
    const marked = this.#storage.markDeleting(type, '', name, preconditions, (obj) => {
      obj['status'] = { ...(isRecord(obj['status']) ? obj['status'] : {}), phase: 'Terminating' };
    });
    this.#terminating.add(name);
    this.#schedule(name);
    return marked;
  }

  /**
   * The namespace controller, emulated: runs after the write that asked for
   * it (as the real controller acts after the API call returns), deletes
   * every namespaced object in the namespace, and deletes the namespace once
   * nothing is left (objects with finalizers hold it until they go).
   */
  #schedule(name: string): void {
    if (this.#scheduled.has(name)) return;
    this.#scheduled.add(name);
    setImmediate(() => {
      this.#scheduled.delete(name);
      if (this.#stopped) return;
      const nsType = this.#registry.byId(NAMESPACES);
      const ns = nsType === undefined ? undefined : this.#storage.get(nsType, '', name);
      if (nsType === undefined || ns === undefined || !deleting(ns)) {
        this.#terminating.delete(name);
        return;
      }
      if (deleteEvery(this.#storage, [...this.#registry.values()].filter((type) => type.namespaced), name) > 0) return;
      this.#terminating.delete(name);
      this.#storage.delete(nsType, '', name);
    });
  }
}
