import type { FieldCause } from './causes.js';
import { checkRules, hasRules, rulesSkipped } from './cel.js';
import { applyDefaults } from './defaults.js';
import { checkEmbeddedResources } from './embedded.js';
import { checkListTypes } from './listTypes.js';
import { jsonCopy, rootNode, type Node, type StructuralSchemaInput } from './node.js';
import { pruneObject } from './prune.js';
import { unchanged } from './ratchet.js';
import { toFieldCause, validateValue } from './validate.js';

type Json = Record<string, unknown>;

/** Field errors that stop the server from running CEL rules at all. */
const BLOCKING: ReadonlySet<FieldCause['reason']> = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** What {@link admitCustomObject} decided: the object as it would be stored, and why it is refused (empty: admitted). */
export interface Admission {
  readonly object: Json;
  readonly causes: FieldCause[];
}

/**
 * Prunes, defaults and validates a custom resource against its version's schema, as
 * kube-apiserver does on create and update.
 *
 * Unknown fields are dropped (except under `x-kubernetes-preserve-unknown-fields`, and `apiVersion`,
 * `kind` and `metadata` of the object and of embedded resources), a non-nullable null with no
 * default is dropped, defaults are applied top-down; then the object is validated against the
 * schema (types, required, bounds, lengths, patterns, enums, formats), its set and map lists are
 * checked for duplicates, and its CEL rules run unless an earlier error blocks them. On update
 * (`old` given), errors about values that did not change are ratcheted away and transition rules
 * see `oldSelf`. The input is not modified. A write to the `/status` subresource stores the stored
 * object with the new `status` and validates only `status` against the schema (messages name paths
 * from `status`, as the server's status validator does), CEL rules over the whole object.
 *
 * @param schema the version's `openAPIV3Schema`
 * @param obj the object as sent
 * @param old the stored object, on update
 * @param subresource `'status'` for a write to `/status`; undefined for the main resource
 * @returns the object to store and the 422 causes, in the server's words (none: admitted)
 */
export function admitCustomObject(schema: StructuralSchemaInput, obj: Json, old: Json | undefined, subresource?: 'status'): Admission {
  const root = rootNode(schema);
  const sent = jsonCopy(obj);
  pruneObject(sent, root);
  applyDefaults(sent, root);
  pruneObject(sent, root);
  const forStatus = subresource === 'status' && old !== undefined;
  const object = forStatus ? withStatusOf(jsonCopy(old), sent) : sent;
  const causes = forStatus ? statusSchemaCauses(object, old, root) : schemaCauses(object, old, root);
  causes.push(...checkEmbeddedResources(object, root));
  if (old === undefined || checkListTypes(old, root).length === 0) causes.push(...checkListTypes(object, root));
  if (!hasRules(root)) return { object, causes };
  if (causes.some((c) => BLOCKING.has(c.reason))) causes.push(rulesSkipped());
  else causes.push(...checkRules(object, old, root));
  return { object, causes };
}

function schemaCauses(object: Json, old: Json | undefined, root: Node): FieldCause[] {
  return validateValue('', object, root)
    .filter((e) => old === undefined || !unchanged(e, object, old))
    .map((e) => toFieldCause(e));
}

/** The status subresource validates `status` alone, with its own schema as the root of the messages. */
function statusSchemaCauses(object: Json, old: Json, root: Node): FieldCause[] {
  const node = root.properties?.get('status');
  if (!Object.hasOwn(object, 'status') || node === undefined) return [];
  return validateValue('', object['status'], node)
    .filter((e) => !unchanged(e, object['status'], old['status']))
    .map((e) => toFieldCause(e, 'status'));
}

/** The stored object with the sent status (or none), as the status subresource stores it. */
function withStatusOf(stored: Json, sent: Json): Json {
  const { status: _dropped, ...rest } = stored;
  return Object.hasOwn(sent, 'status') ? { ...rest, status: sent['status'] } : rest;
}

/**
 * The object with its schema's defaults applied, as the server applies them to what it reads from
 * storage (a default added to the schema later shows on objects stored before). The input is not
 * modified.
 *
 * @param schema the version's `openAPIV3Schema`
 * @param obj a stored object
 * @returns a defaulted copy
 */
export function defaultCustomObject(schema: StructuralSchemaInput, obj: Json): Json {
  const root = rootNode(schema);
  const object = jsonCopy(obj);
  applyDefaults(object, root);
  pruneObject(object, root);
  return object;
}
