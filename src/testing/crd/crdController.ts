import { decideNames, namesJson, namesOf, type CrdCondition } from './crdNames.js';
import { CRD_RESOURCE, crdResourceType } from './crdResource.js';
import { specOf, versionsOf } from './crdValidation.js';
import { customResourceTypes } from './customResourceTypes.js';
import { defaultOnRead } from './admission.js';
import type { HistoryEvent } from '../storage/history.js';
import type { StoredObject } from '../storage/storedObject.js';
import type { ResourceRegistry } from '../storage/registry.js';
import type { ResourceType } from '../storage/resources.js';
import type { Storage } from '../storage/storage.js';
import { jsonEqual, timestamp, isRecord } from '../writes/objectRules.js';
import { deleteEvery } from '../storage/deleteEvery.js';

type AnyObject = Record<string, unknown>;

/** The finalizer a CRD's deletion waits on while its objects are deleted. */
const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const metaOf = (o: AnyObject): AnyObject => o['metadata'] as AnyObject;
const deleting = (o: AnyObject): boolean => metaOf(o)['deletionTimestamp'] !== undefined;

/** What one CRD has installed: the ids of its served resources and the generation they were built from. */
interface Installed {
  ids: Set<string>;
  /** The id of the store every version's objects are in. */
  store: string | undefined;
  /** The generation and accepted names the resources were built from. */
  signature: string;
  terminating: boolean;
}

/**
 * apiextensions' controllers, emulated over the simulator's storage: a CRD
 * written is named (NamesAccepted), served under its accepted names for
 * every served version and marked Established, in the same turn as the
 * write; a CRD deleted is marked Terminating, its objects are deleted on
 * the next tick, and it goes once the last of them has.
 */
export class CrdController {
  // Where CRDs and their objects are stored.
  readonly #storage: Storage;
  // Where served resources are added and removed.
  readonly #registry: ResourceRegistry;
  // The CRD resource, registered by the constructor.
  readonly type: ResourceType;
  // What each CRD has installed, by CRD name.
  readonly #installed = new Map<string, Installed>();
  // One pending cleanup pass per CRD being deleted.
  readonly #scheduled = new Set<string>();
  // Set by the server's close(): pending passes then do nothing.
  #stopped = false;
  // Told of a resource no longer served, so its open watches end.
  readonly #removed: (id: string) => void;

  constructor(storage: Storage, registry: ResourceRegistry, removed: (id: string) => void) {
    this.#storage = storage;
    this.#registry = registry;
    this.#removed = removed;
    this.type = crdResourceType();
    registry.add(this.type);
  }

  /** Stops the controller for good (the server closed). */
  stop(): void {
    this.#stopped = true;
  }

  /** Called for every write: CRD writes are acted on, and a custom object's deletion may let its CRD go. */
  observe(e: HistoryEvent): void {
    if (e.resource.id !== CRD_RESOURCE) {
      if (e.type !== 'DELETED') return;
      for (const [name, inst] of this.#installed) if (inst.terminating && inst.store === e.resource.id) this.#schedule(name);
      return;
    }
    const name = e.cur.name;
    if (e.type === 'DELETED') this.#uninstall(name);
    else if (deleting(e.cur.obj)) this.#schedule(name);
    else this.#reconcile(e.cur);
  }

  /**
   * The mark a CRD gets on its first DELETE, as apiextensions' registry
   * sets it: the cleanup finalizer and a Terminating condition (the storage
   * adds the deletionTimestamp); its objects go on the next tick.
   */
  static terminatingMark(obj: AnyObject): void {
    const meta = metaOf(obj);
    const finalizers = Array.isArray(meta['finalizers']) ? (meta['finalizers'] as unknown[]) : [];
    if (!finalizers.includes(CLEANUP_FINALIZER)) meta['finalizers'] = [...finalizers, CLEANUP_FINALIZER];
    obj['status'] = withCondition(obj['status'], { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' });
  }

  #others(name: string): AnyObject[] {
    return this.#storage.list(this.type).filter((o) => o.name !== name).map((o) => o.obj);
  }

  /** Names the CRD, serves it when it may, and writes the status that says so when it changed. */
  #reconcile(stored: StoredObject): void {
    const crd = stored.obj;
    const naming = decideNames(crd, this.#others(stored.name));
    const status = isRecord(crd['status']) ? crd['status'] : {};
    const wasEstablished = conditionOf(status, 'Established')?.status === 'True';
    const established = wasEstablished || naming.condition.status === 'True';
    let next = withCondition(status, naming.condition);
    next = withCondition(
      next,
      established
        ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
        : { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
    );
    const storageVersion = versionsOf(specOf(crd)).find((v) => v['storage'] === true)?.['name'];
    const storedVersions = Array.isArray(status['storedVersions']) ? (status['storedVersions'] as unknown[]) : [];
    next = {
      ...next,
      acceptedNames: namesJson(naming.accepted),
      storedVersions: typeof storageVersion === 'string' && !storedVersions.includes(storageVersion) ? [...storedVersions, storageVersion] : storedVersions,
    };
    if (established) this.#install(stored.name, crd, namesOf(next['acceptedNames']));
    if (!jsonEqual(next, status)) this.#storage.update(this.type, { ...crd, status: next }, undefined, 'status');
  }

  /** Serves the CRD's served versions (again, after a change), and stops serving what it no longer has. */
  #install(name: string, crd: AnyObject, names: ReturnType<typeof namesOf>): void {
    const signature = JSON.stringify([metaOf(crd)['generation'], names]);
    let inst = this.#installed.get(name);
    if (inst?.signature === signature) return;
    if (inst === undefined) this.#installed.set(name, (inst = { ids: new Set(), store: undefined, signature, terminating: false }));
    const record = inst;
    const types = names.plural === '' ? [] : customResourceTypes(crd, names, () => record.terminating);
    for (const id of inst.ids) if (!types.some((t) => t.id === id)) this.#remove(id);
    for (const t of types) this.#registry.add(t);
    const store = types[0]?.storage;
    if (store !== undefined) {
      // Objects written before the schema gained defaults read with them, as kube-apiserver defaults on read.
      const storageVersion = versionsOf(specOf(crd)).find((v) => v['storage'] === true);
      const schema = isRecord(storageVersion?.['schema']) ? (storageVersion['schema']['openAPIV3Schema'] as AnyObject | undefined) : undefined;
      this.#storage.rewriteInPlace(store, (obj) => defaultOnRead(schema, obj));
    }
    inst.ids = new Set(types.map((t) => t.id));
    inst.store = store?.id ?? inst.store;
    inst.signature = signature;
  }

  #uninstall(name: string): void {
    const inst = this.#installed.get(name);
    if (inst === undefined) return;
    for (const id of inst.ids) this.#remove(id);
    this.#installed.delete(name);
  }

  #remove(id: string): void {
    this.#registry.remove(id);
    this.#removed(id);
  }

  /**
   * The finalizer's work, after the write that asked for it: every object of
   * the CRD is deleted (those with finalizers hold the CRD until they go),
   * then the resource stops being served and the finalizer is removed, which
   * deletes the CRD.
   */
  #schedule(name: string): void {
    if (this.#scheduled.has(name)) return;
    this.#scheduled.add(name);
    const inst = this.#installed.get(name);
    if (inst !== undefined) inst.terminating = true;
    setImmediate(() => {
      this.#scheduled.delete(name);
      if (!this.#stopped) this.#cleanup(name);
    });
  }

  #cleanup(name: string): void {
    const stored = this.#storage.get(this.type, '', name);
    if (stored === undefined || !deleting(stored.obj)) return;
    const status = isRecord(stored.obj['status']) ? stored.obj['status'] : {};
    const inProgress: CrdCondition = { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' };
    if (conditionOf(status, 'Terminating')?.reason !== inProgress.reason) {
      this.#storage.update(this.type, { ...stored.obj, status: withCondition(status, inProgress) }, undefined, 'status');
    }
    const types = [...(this.#installed.get(name)?.ids ?? [])].flatMap((id) => this.#registry.byId(id) ?? []);
    if (deleteEvery(this.#storage, types) > 0) return;
    this.#uninstall(name);
    const current = this.#storage.get(this.type, '', name);
    if (current === undefined) return;
    const meta = metaOf(current.obj);
    const finalizers = (Array.isArray(meta['finalizers']) ? (meta['finalizers'] as unknown[]) : []).filter((f) => f !== CLEANUP_FINALIZER);
    this.#storage.update(this.type, { ...current.obj, metadata: { ...meta, finalizers } }, undefined);
  }
}

function conditionOf(status: AnyObject, type: string): AnyObject | undefined {
  const list = Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]) : [];
  return list.find((c): c is AnyObject => isRecord(c) && c['type'] === type);
}

/** The status with one condition set: its transition time kept unless its status flips, as apiextensions' SetCRDCondition does. */
function withCondition(status: unknown, condition: CrdCondition): AnyObject {
  const s = isRecord(status) ? status : {};
  const list = Array.isArray(s['conditions']) ? (s['conditions'] as unknown[]).filter(isRecord) : [];
  const old = list.find((c) => c['type'] === condition.type);
  const lastTransitionTime = old !== undefined && old['status'] === condition.status ? old['lastTransitionTime'] : timestamp(Date.now());
  const next = { ...condition, lastTransitionTime };
  const conditions = old === undefined ? [...list, next] : list.map((c) => (c === old ? next : c));
  return { ...s, conditions };
}
