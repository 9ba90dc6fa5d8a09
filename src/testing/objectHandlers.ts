import type { IncomingMessage } from 'node:http';
import type { ServerContext } from './context.js';
import type { StoredObject } from './history.js';
import { objectView, type Conversion } from './negotiate.js';
import { objectJson } from './partialObjectMetadata.js';
import { jsonPatch, mergePatch } from './patch.js';
import type { ResourceType } from './resources.js';
import { badRequest, notFound, StatusError } from './status.js';
import type { Preconditions, Storage } from './storage.js';
import { pathNotFound, type Target } from './target.js';

type AnyObject = Record<string, unknown>;

/** A response a handler computed: the code and the JSON body, and the object it is about. */
export interface Answer {
  readonly code: number;
  readonly body: string;
  readonly object: StoredObject;
}

const MAX_BODY = 16 * 1024 * 1024;

function isRecord(v: unknown): v is AnyObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Reads a JSON request body (undefined when empty); 413 past 16 MiB, 400 when it is not JSON. */
export async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) throw new StatusError(413, 'RequestEntityTooLarge', 'the request body is too large');
    chunks.push(b);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `DeleteOptions.preconditions` of a DELETE body, if any. */
export function preconditionsOf(body: unknown): Preconditions | undefined {
  return isRecord(body) && isRecord(body['preconditions']) ? (body['preconditions'] as Preconditions) : undefined;
}

function statusOnly(target: Target): 'status' | undefined {
  return target.subresource === 'status' ? 'status' : undefined;
}

/**
 * Applies a patch of the given content type to the current object and
 * stores the result. The patched object keeps the current resourceVersion
 * unless the patch sets one, so a patch is never refused for lacking one.
 */
export function applyPatch(storage: Storage, type: ResourceType, namespace: string, name: string, contentType: string, patch: unknown, sub: 'status' | undefined): StoredObject {
  const current = storage.get(type, namespace, name);
  if (current === undefined) throw notFound(type, name);
  const base = JSON.parse(current.json) as AnyObject;
  let next: unknown;
  switch (contentType) {
    case 'application/merge-patch+json':
    case 'application/strategic-merge-patch+json':
      if (!isRecord(patch)) throw badRequest('a merge patch must be a JSON object');
      next = mergePatch(base, patch);
      break;
    case 'application/json-patch+json':
      next = jsonPatch(base, patch);
      break;
    case 'application/apply-patch+yaml':
      throw new StatusError(415, 'UnsupportedMediaType', 'server-side apply is not supported by the rxkube simulator');
    default:
      throw new StatusError(
        415,
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json',
      );
  }
  if (!isRecord(next)) throw badRequest('the patched object is not a JSON object');
  const meta = isRecord(next['metadata']) ? next['metadata'] : {};
  if (meta['name'] !== name) throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
  if (meta['resourceVersion'] === undefined || meta['resourceVersion'] === null || meta['resourceVersion'] === '') {
    next['metadata'] = { ...meta, resourceVersion: String(current.rv) };
  }
  return storage.update(type, next, type.namespaced ? namespace : undefined, sub);
}

/**
 * Serves GET, POST, PUT, PATCH and DELETE of one object (POST on the
 * collection). The answer is the object, as PartialObjectMetadata when the
 * client asked for it; a list conversion is 406 after the request was
 * performed, as kube-apiserver converts the result of the operation.
 */
export async function objectAnswer(
  ctx: ServerContext,
  verb: 'get' | 'create' | 'update' | 'patch' | 'delete',
  target: Target,
  req: IncomingMessage,
  convert: Conversion | undefined,
): Promise<Answer> {
  const { storage } = ctx;
  const type = target.type;
  const render = (o: StoredObject): string => objectJson(o, objectView(convert, type));
  const namespace = target.namespace ?? '';
  const name = target.name as string;
  switch (verb) {
    case 'get': {
      const o = storage.get(type, namespace, name);
      if (o === undefined) throw notFound(type, name);
      return { code: 200, body: render(o), object: o };
    }
    case 'create': {
      const body = await readBody(req);
      if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
      if (type.namespaced && target.namespace === undefined) throw pathNotFound();
      const created = storage.create(type, body, target.namespace);
      return { code: 201, body: render(created), object: created };
    }
    case 'update': {
      const body = await readBody(req);
      if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
      const meta = isRecord(body['metadata']) ? body['metadata'] : {};
      if (meta['name'] !== undefined && meta['name'] !== name) {
        throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
      }
      const existed = storage.get(type, namespace, name) !== undefined;
      const stored = storage.update(type, { ...body, metadata: { ...meta, name } }, target.namespace, statusOnly(target));
      // A PUT that created the object (leases allow it) answers 201 Created, as kube-apiserver does.
      return { code: existed ? 200 : 201, body: render(stored), object: stored };
    }
    case 'patch': {
      const body = await readBody(req);
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
      const patched = applyPatch(storage, type, namespace, name, contentType, body, statusOnly(target));
      return { code: 200, body: render(patched), object: patched };
    }
    case 'delete': {
      const body = await readBody(req);
      const deleted = ctx.namespaces.delete(type, namespace, name, preconditionsOf(body));
      return { code: 200, body: render(deleted), object: deleted };
    }
  }
}
