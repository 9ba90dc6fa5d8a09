import { invalid, required, type FieldCause } from './causes.js';
import { child, index, key } from './fieldPath.js';
import { isRecord, type Node } from './node.js';

// An x-kubernetes-embedded-resource below the root must name its apiVersion and kind, as strings
// that are not empty (the server's schemaobjectmeta validation); the object's own apiVersion and
// kind are the serving part's to check.

const KIND = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

function checkEmbedded(path: string, obj: Readonly<Record<string, unknown>>, out: FieldCause[]): void {
  if (!('apiVersion' in obj)) out.push(required(child(path, 'apiVersion')));
  if (!('kind' in obj)) out.push(required(child(path, 'kind')));
  const apiVersion = obj['apiVersion'];
  if ('apiVersion' in obj) {
    if (typeof apiVersion !== 'string') out.push(invalid(child(path, 'apiVersion'), apiVersion, 'must be a string'));
    else if (apiVersion === '') out.push(invalid(child(path, 'apiVersion'), apiVersion, 'must not be empty'));
  }
  const kind = obj['kind'];
  if ('kind' in obj) {
    if (typeof kind !== 'string') out.push(invalid(child(path, 'kind'), kind, 'must be a string'));
    else if (kind === '') out.push(invalid(child(path, 'kind'), kind, 'must not be empty'));
    else if (kind.length > 63 || !KIND.test(kind.toLowerCase())) {
      out.push(invalid(child(path, 'kind'), kind, "may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"));
    }
  }
}

function walk(path: string, value: unknown, node: Node | undefined, isRoot: boolean, out: FieldCause[]): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(index(path, i), v, node.items, false, out));
    return;
  }
  if (!isRecord(value)) return;
  if (node.embedded && !isRoot) checkEmbedded(path, value, out);
  for (const [k, v] of Object.entries(value)) {
    const prop = node.properties?.get(k);
    if (prop !== undefined) walk(child(path, k), v, prop, false, out);
    else if (typeof node.additional === 'object') walk(key(path, k), v, node.additional, false, out);
  }
}

/** The causes of embedded resources below the root that lack or garble their apiVersion or kind. */
export function checkEmbeddedResources(obj: Readonly<Record<string, unknown>>, root: Node): FieldCause[] {
  const out: FieldCause[] = [];
  walk('', obj, root, true, out);
  return out;
}
