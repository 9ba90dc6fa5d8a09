import type { FaultVerb } from '../faults/faults.js';
import type { ResourceRegistry } from '../storage/registry.js';
import type { ResourceType } from '../storage/resources.js';
import { badRequest, StatusError } from './status.js';

/** The parts of a request path that name what is being acted on. */
export interface Target {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

/** kube-apiserver's 404 for a path no resource serves. */
export function pathNotFound(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource');
}

/**
 * Resolves a resource path (`/api/v1/namespaces/ns/pods/name/status`,
 * `/apis/g/v/…`, and the legacy `/…/watch/…` form) to its target, or 404.
 */
export function parsePath(pathname: string, registry: ResourceRegistry): { target: Target; legacyWatch: boolean } {
  let parts: string[];
  try {
    parts = pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
  } catch {
    throw badRequest(`malformed request path ${JSON.stringify(pathname)}`);
  }
  // `/api/<version>/…` for the core group, `/apis/<group>/<version>/…` for the others.
  const head = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : undefined;
  if (head === undefined || parts.length <= head) throw pathNotFound();
  const group = head === 3 ? (parts[1] as string) : '';
  const version = parts[head - 1] as string;
  let rest = parts.slice(head);
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length < 1 || rest.length > 3) throw pathNotFound();
  const type = registry.byPath(group, version, rest[0] as string);
  if (type === undefined) throw pathNotFound();
  if (namespace !== undefined && !type.namespaced) throw pathNotFound();
  const name = rest[1];
  if (name !== undefined && type.namespaced && namespace === undefined) throw pathNotFound();
  const subresource = rest[2];
  // Only resources that declare a status (or scale) subresource serve one, as with kube-apiserver.
  if (subresource !== undefined && !((subresource === 'status' && type.statusSubresource) || (subresource === 'scale' && type.scale !== undefined))) throw pathNotFound();
  return { target: { type, namespace, name, subresource }, legacyWatch };
}

/** The verb a request is, as faults name it; undefined when the method is not allowed there. */
export function verbOf(method: string, named: boolean, watch: boolean): Exclude<FaultVerb, '*'> | undefined {
  switch (method) {
    case 'GET':
      return named ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return named ? undefined : 'create';
    case 'PUT':
      return named ? 'update' : undefined;
    case 'PATCH':
      return named ? 'patch' : undefined;
    case 'DELETE':
      // A collection DELETE (deletecollection) counts as a list for faults.
      return named ? 'delete' : 'list';
    default:
      return undefined;
  }
}

/** Parses a resourceVersion parameter, or 400. */
export function parseRv(text: string): number {
  const rv = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(rv)) {
    throw badRequest(`invalid resource version: ${JSON.stringify(text)} is not a non-negative integer`);
  }
  return rv;
}
