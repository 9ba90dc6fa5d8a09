import { invalid, required, type FieldCause } from './causes.js';
import { child, index, key } from './fieldPath.js';
import { isRecord, type Node } from './node.js';

// An x-kubernetes-embedded-resource below the root must name its apiVersion and kind, as strings
// that are not empty (the server's schemaobjectmeta validation); the object's own apiVersion and
// kind are the serving part's to check.

/** apimachinery's DNS-1035 label, and its message for a value that is not one. */
export const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** apimachinery's IsDNS1035Label messages for a lower-cased kind, joined as the server joins them. */
function kindError(kind: string): string | undefined {
  const lower = kind.toLowerCase();
  const errs: string[] = [];
  if (lower.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1035.test(lower)) errs.push(DNS1035_MESSAGE);
  return errs.length > 0 ? `may have mixed case, but should otherwise match: ${errs.join(',')}` : undefined;
}

/** schema.ParseGroupVersion's refusal: more than one slash. */
function groupVersionError(apiVersion: string): string | undefined {
  if (apiVersion === '/') return undefined;
  return apiVersion.split('/').length > 2 ? `unexpected GroupVersion string: ${apiVersion}` : undefined;
}

function checkEmbedded(path: string, obj: Readonly<Record<string, unknown>>, out: FieldCause[]): void {
  for (const name of ['apiVersion', 'kind']) if (!Object.hasOwn(obj, name)) out.push(required(child(path, name)));
  const field = (name: 'apiVersion' | 'kind', why: (s: string) => string | undefined): void => {
    const at = child(path, name);
    const v = obj[name];
    if (!Object.hasOwn(obj, name)) return;
    if (typeof v !== 'string') out.push(invalid(at, v, 'must be a string'));
    else if (v === '') out.push(invalid(at, v, 'must not be empty'));
    else {
      const refusal = why(v);
      if (refusal !== undefined) out.push(invalid(at, v, refusal));
    }
  };
  field('apiVersion', groupVersionError);
  field('kind', kindError);
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
