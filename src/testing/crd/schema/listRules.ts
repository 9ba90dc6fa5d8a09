import { forbidden, invalid, notSupported, required, type FieldCause } from './causes.js';
import { child, key } from './fieldPath.js';
import type { Node } from './node.js';

// The CRD checks of a schema node beyond structurality: the type names OpenAPI v3 has, no
// uniqueItems (quadratic), no $ref, and coherent x-kubernetes-list-type / list-map-keys.

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

function checkMapList(path: string, node: Node, items: Node, out: FieldCause[]): void {
  if (node.listMapKeys.length === 0) out.push(required(child(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
  if (items.type !== 'object') out.push(invalid(child(child(path, 'items'), 'type'), items.type, "must be object if parent array's x-kubernetes-list-type is map"));
  if (node.listMapKeys.some((k) => items.properties?.has(k) !== true)) {
    out.push(invalid(child(path, 'x-kubernetes-list-map-keys'), node.listMapKeys, 'entries must all be names of item properties'));
  }
  if (new Set(node.listMapKeys).size !== node.listMapKeys.length) {
    out.push(invalid(child(path, 'x-kubernetes-list-map-keys'), node.listMapKeys, 'must not contain duplicate entries'));
  }
  for (const k of node.listMapKeys) {
    const prop = items.properties?.get(k);
    if (prop === undefined) continue;
    const at = key(child(child(path, 'items'), 'properties'), k);
    if (!items.required.includes(k) && !prop.hasDefault) {
      out.push(required(child(at, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
    }
    if (prop.nullable) out.push(forbidden(child(at, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
  }
}

function checkListType(path: string, node: Node, out: FieldCause[]): void {
  const listType = node.listType;
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) {
    out.push(notSupported(child(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  if (listType !== undefined && node.type !== 'array') {
    const why = 'must be array if x-kubernetes-list-type is specified';
    out.push(node.type === '' ? required(child(path, 'type'), why) : invalid(child(path, 'type'), node.type, why));
  }
  if (node.listMapKeys.length > 0 && listType !== 'map') {
    const why = 'must be map if x-kubernetes-list-map-keys is non-empty';
    out.push(listType === undefined ? required(child(path, 'x-kubernetes-list-type'), why) : invalid(child(path, 'x-kubernetes-list-type'), listType, why));
  }
  const items = node.items;
  if (items === undefined || (listType !== 'set' && listType !== 'map')) {
    if (listType === 'map' && items === undefined) out.push(required(child(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    return;
  }
  if (listType === 'map') checkMapList(path, node, items, out);
  if (items.nullable) out.push(forbidden(child(child(path, 'items'), 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`));
}

/** The reasons a node is refused in a CRD besides structurality. */
export function crdNodeRules(path: string, node: Node, out: FieldCause[]): void {
  if (node.type !== '' && !TYPES.includes(node.type)) out.push(notSupported(child(path, 'type'), node.type, TYPES));
  if (node.uniqueItems) out.push(forbidden(child(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if ('$ref' in node.raw) out.push(forbidden(child(path, '$ref'), '$ref is not supported'));
  checkListType(path, node, out);
}
