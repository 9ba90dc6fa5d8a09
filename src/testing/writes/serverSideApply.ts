import { jsonText } from '../../store/jsonText.js';
import { leaves, overlaps, pathText, removeAt, setAt, valueAt, type FieldPath, type FieldSet } from './fieldSets.js';
import { dropMissing, entryFor, readEntries, scopeOf, writeEntries, type FieldWriter, type ManagedEntry } from './managedFields.js';
import { isRecord, jsonEqual } from './objectRules.js';
import type { ResourceType } from '../storage/resources.js';
import { applyConflict, badRequest, type FieldConflict } from '../server/status.js';

// Server-side apply over the simulator's field sets: an applier owns exactly the fields of its last
// applied configuration; another manager's field may only be changed with force; a field the applier
// stops sending goes, unless someone else owns it too.

type AnyObject = Record<string, unknown>;

/** What an apply request is, once its parameters were checked. */
export interface ApplyWriter extends FieldWriter {
  /** Take fields other managers own instead of failing with 409. */
  readonly force: boolean;
}

/** Checks an apply body as kube-apiserver does before applying it: type metadata present and right, no managedFields. */
export function checkApplyConfiguration(type: ResourceType, config: unknown, name: string): asserts config is AnyObject {
  if (!isRecord(config)) throw badRequest('the apply configuration must be a JSON (or YAML) object');
  const apiVersion = config['apiVersion'];
  if (apiVersion !== type.apiVersion) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(apiVersion ?? '')}, expected: ${type.apiVersion}`);
  }
  if (typeof config['kind'] !== 'string' || config['kind'] === '') throw badRequest("Object 'Kind' is missing in the apply configuration");
  const meta = config['metadata'];
  if (!isRecord(meta)) throw badRequest('metadata: the apply configuration must name the object');
  if (meta['managedFields'] !== undefined && meta['managedFields'] !== null) throw badRequest('metadata.managedFields must be nil');
  if (meta['name'] !== name) throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
}

/** How a conflict names a manager: an Update entry with the apiVersion it wrote through. */
function managerText(e: ManagedEntry): string {
  return e.operation === 'Update' ? `${JSON.stringify(e.manager)} using ${e.apiVersion}` : JSON.stringify(e.manager);
}

const isEmptyMap = (v: unknown): boolean => isRecord(v) && Object.keys(v).length === 0;

/**
 * Whether setting `path` to the config's value changes a field `owned` of
 * another manager. An empty map in the config merges (it takes nothing
 * from the fields inside it), so it only meets a field of the same path.
 */
function clashes(live: AnyObject, config: AnyObject, path: FieldPath, owned: FieldPath): boolean {
  if (!overlaps(path, owned)) return false;
  const want = valueAt(config, path);
  if (isEmptyMap(want) && owned.length !== path.length) return false;
  return !jsonEqual(valueAt(live, path), want);
}

/**
 * Applies `config` as `writer` to the stored object `live`: the object to
 * store, with its managedFields. Throws the 409 of kube-apiserver, naming
 * each manager and field, when the config would change fields other
 * managers own and `force` is not set; with `force` those fields change
 * hands.
 *
 * @param live the stored object (not modified).
 * @param config the applied configuration, checked by {@link checkApplyConfiguration}.
 */
export function applyToLive(type: ResourceType, live: AnyObject, config: AnyObject, writer: ApplyWriter): AnyObject {
  const scope = scopeOf(type, writer.subresource);
  const entries = readEntries(live);
  const mine = entryFor(entries, 'Apply', writer, type.apiVersion);
  const wanted: FieldSet = leaves(config, scope);
  const conflicts: FieldConflict[] = [];
  const taken: { entry: ManagedEntry; key: string }[] = [];
  for (const e of entries) {
    if (e === mine) continue;
    for (const [key, owned] of e.fields) {
      for (const path of wanted.values()) {
        if (!clashes(live, config, path, owned)) continue;
        conflicts.push({ manager: managerText(e), field: pathText(path) });
        taken.push({ entry: e, key });
        break;
      }
    }
  }
  if (conflicts.length > 0 && !writer.force) throw applyConflict(conflicts);
  for (const { entry, key } of taken) entry.fields.delete(key);

  const result = JSON.parse(jsonText(live)) as AnyObject;
  for (const path of wanted.values()) {
    const want = valueAt(config, path);
    if (isEmptyMap(want)) {
      if (!isRecord(valueAt(result, path))) setAt(result, path, {});
    } else setAt(result, path, want !== null && typeof want === 'object' ? (JSON.parse(jsonText(want)) as unknown) : want);
  }
  // Fields this applier sent before and not now go, unless a field inside them is still owned, by the new
  // config or by someone else (owning an enclosing empty map keeps nothing: `data: {}` lets `data.a` go).
  const holds = (owned: FieldPath, path: FieldPath): boolean => owned.length >= path.length && overlaps(owned, path);
  for (const [key, path] of mine.fields) {
    if (wanted.has(key)) continue;
    const kept = [...wanted.values()].some((p) => holds(p, path)) || entries.some((e) => e !== mine && [...e.fields.values()].some((p) => holds(p, path)));
    if (!kept) removeAt(result, path);
  }
  // A removal may have pruned an empty map the config itself asks for.
  for (const path of wanted.values()) if (isEmptyMap(valueAt(config, path)) && !isRecord(valueAt(result, path))) setAt(result, path, {});
  mine.fields = wanted;
  dropMissing(entries, result);
  const meta = result['metadata'] as AnyObject;
  const managedFields = writeEntries(entries, writer.time);
  if (managedFields === undefined) delete meta['managedFields'];
  else meta['managedFields'] = managedFields;
  // A resourceVersion in the config makes the apply conditional, as in any write.
  const configMeta = config['metadata'] as AnyObject;
  if (typeof configMeta['resourceVersion'] === 'string' && configMeta['resourceVersion'] !== '') meta['resourceVersion'] = configMeta['resourceVersion'];
  return result;
}
