// Label key and value rules of the Kubernetes API (qualified names and label
// values). Internal: selectors and index functions share them.

const NAME_PART = /^(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 63;
const MAX_PREFIX = 253;

/**
 * Checks a label key (`[prefix/]name`).
 * @returns why the key is invalid, or `undefined` when it is valid.
 */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  let name = key;
  if (slash !== -1) {
    if (key.indexOf('/', slash + 1) !== -1) return `label key ${JSON.stringify(key)} has more than one '/'`;
    const prefix = key.slice(0, slash);
    name = key.slice(slash + 1);
    if (prefix.length === 0) return `label key ${JSON.stringify(key)} has an empty prefix before '/'`;
    if (prefix.length > MAX_PREFIX) return `label key prefix must be at most ${MAX_PREFIX} characters (got ${prefix.length})`;
    if (!DNS_SUBDOMAIN.test(prefix)) {
      return `label key prefix ${JSON.stringify(prefix)} must be a lowercase DNS subdomain: lowercase alphanumerics, '-' or '.', starting and ending with an alphanumeric`;
    }
  }
  if (name.length === 0) return `label key ${JSON.stringify(key)} has an empty name`;
  if (name.length > MAX_NAME) return `label key name must be at most ${MAX_NAME} characters (got ${name.length})`;
  if (!NAME_PART.test(name)) {
    return `label key name ${JSON.stringify(name)} must consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/**
 * Checks a label value (may be empty).
 * @returns why the value is invalid, or `undefined` when it is valid.
 */
export function labelValueProblem(value: string): string | undefined {
  if (value.length === 0) return undefined;
  if (value.length > MAX_NAME) return `label value must be at most ${MAX_NAME} characters (got ${value.length})`;
  if (!NAME_PART.test(value)) {
    return `label value ${JSON.stringify(value)} must be empty or consist of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}
