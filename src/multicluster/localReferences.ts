import { load } from 'js-yaml';
import { MalformedDocumentError } from '../errors/MalformedDocumentError.js';

/**
 * The fields of a kubeconfig's user that make its reader act on its own
 * machine: run a command (`exec`, and the `gcp`/`azure`/`oidc` providers,
 * which refresh by running one or by writing back), or read a file and send
 * what it holds (a token, a client certificate and key).
 */
const USER_FIELDS = ['exec', 'auth-provider', 'token-file', 'tokenFile', 'client-certificate', 'client-key'] as const;
/** A cluster's field that reads a file of the reader's: the CA to trust. */
const CLUSTER_FIELDS = ['certificate-authority'] as const;

/**
 * Parses a kubeconfig without acting on it and names the fields that point
 * into the machine that would load it (HI-49), as `users[0].user.exec`:
 * indices, never the document's own names or values, which are a Secret
 * writer's words. client-node reads `token-file` while it parses, so this
 * must run first.
 *
 * @param text the kubeconfig, YAML or JSON.
 * @returns the fields found; empty when the kubeconfig names nothing local.
 * @throws {MalformedDocumentError} when it does not parse, quoting nothing of it.
 */
export function localReferences(text: string): string[] {
  let doc: unknown;
  try {
    doc = load(text);
  } catch (err) {
    throw MalformedDocumentError.from(err);
  }
  const found: string[] = [];
  const scan = (list: unknown, entry: string, fields: readonly string[]): void => {
    if (!Array.isArray(list)) return;
    list.forEach((item: unknown, i) => {
      const body = (item as Record<string, unknown> | null)?.[entry];
      if (typeof body !== 'object' || body === null) return;
      for (const f of fields) if (Object.hasOwn(body, f) && (body as Record<string, unknown>)[f] != null) found.push(`${entry}s[${i}].${entry}.${f}`);
    });
  };
  const root = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  scan(root['users'], 'user', USER_FIELDS);
  scan(root['clusters'], 'cluster', CLUSTER_FIELDS);
  return found;
}
