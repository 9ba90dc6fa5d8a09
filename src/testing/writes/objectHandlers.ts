import type { IncomingMessage } from 'node:http';
import type { ServerContext } from '../context.js';
import type { StoredObject } from '../storage/storedObject.js';
import { objectView, type Conversion } from '../server/negotiate.js';
import { objectJson } from '../server/partialObjectMetadata.js';
import { applyCreateEntries, trackUpdate } from './managedFields.js';
import { checkPreconditions, isRecord, timestamp } from './objectRules.js';
import { patchedObject } from './patch.js';
import type { ResourceType } from '../storage/resources.js';
import { applyToLive, checkApplyConfiguration } from './serverSideApply.js';
import { badRequest, notFound, StatusError } from '../server/status.js';
import type { Preconditions, Storage, WriteHooks } from '../storage/storage.js';
import { pathNotFound, type Target } from '../server/target.js';
import { writeParams, type WriteParams } from './writeParams.js';
import { scaleAnswer } from './scale.js';

type AnyObject = Record<string, unknown>;

/** A response a handler computed: the code and the JSON body, and the object it is about. */
export interface Answer {
  readonly code: number;
  readonly body: string;
  readonly object: StoredObject;
}

const MAX_BODY = 16 * 1024 * 1024;
/** The content type of a server-side apply. */
export const APPLY = 'application/apply-patch+yaml';

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

/** How a write through the API is recorded: its parameters, and so its field manager and dry run. */
export interface ApiWrite {
  readonly params: WriteParams;
  /** The write's time, RFC 3339. */
  readonly time: string;
}

/** The storage hooks of an API write: dry run, and the managedFields of a non-apply write. */
export function hooksOf(type: ResourceType, sub: 'status' | undefined, write: ApiWrite | undefined): WriteHooks | undefined {
  if (write === undefined) return undefined;
  const writer = { manager: write.params.manager, subresource: sub, time: write.time };
  return { dryRun: write.params.dryRun, managedFields: (prev, next) => trackUpdate(type, prev, next, writer) };
}

/**
 * A write to the main resource of a type with a status subresource leaves
 * the status as stored (a create starts without one), as kube-apiserver's
 * strategies reset it.
 */
export function keepStatus(type: ResourceType, sub: 'status' | undefined, obj: AnyObject, current: StoredObject | undefined): AnyObject {
  if (!type.statusSubresource || sub === 'status') return obj;
  const { status: _ignored, ...rest } = obj;
  const status = current?.obj['status'];
  return status === undefined ? rest : { ...rest, status };
}

/**
 * Applies a patch of the given content type to the current object and
 * stores the result. The patched object keeps the current resourceVersion
 * unless the patch sets one, so a patch is never refused for lacking one.
 * A server-side apply (`application/apply-patch+yaml`, JSON bodies only)
 * needs `write` for its field manager; it creates the object when missing.
 */
export function applyPatch(
  storage: Storage,
  type: ResourceType,
  namespace: string,
  name: string,
  contentType: string,
  patch: unknown,
  sub: 'status' | undefined,
  write?: ApiWrite,
): StoredObject {
  const current = storage.get(type, namespace, name);
  const ns = type.namespaced ? namespace : undefined;
  if (contentType === APPLY && write !== undefined) {
    checkApplyConfiguration(type, patch, name);
    const writer = { manager: write.params.manager, subresource: sub, time: write.time, force: write.params.force };
    if (current === undefined) {
      if (sub === 'status') throw notFound(type, name);
      const created = keepStatus(type, sub, patch, undefined);
      return storage.create(type, created, ns, { dryRun: write.params.dryRun, managedFields: () => applyCreateEntries(type, created, writer) });
    }
    const next = applyToLive(type, current.obj, patch, writer);
    const managedFields = (next['metadata'] as AnyObject)['managedFields'];
    return storage.update(type, next, ns, sub, { dryRun: write.params.dryRun, managedFields: () => managedFields });
  }
  if (current === undefined) throw notFound(type, name);
  const next = patchedObject(JSON.parse(current.json), contentType, patch, String(current.rv));
  if (next === undefined) {
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json',
    );
  }
  const meta = next['metadata'] as AnyObject;
  if (meta['name'] !== name) throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
  const patched = write === undefined ? next : keepStatus(type, sub, next, current);
  return storage.update(type, patched, ns, sub, hooksOf(type, sub, write));
}

/**
 * Serves GET, POST, PUT, PATCH and DELETE of one object (POST on the
 * collection), with the write parameters (dryRun, fieldManager, force)
 * and managedFields. The answer is the object, as PartialObjectMetadata
 * when the client asked for it; a list conversion is 406 after the
 * request was performed, as kube-apiserver converts the result of the
 * operation.
 */
export async function objectAnswer(
  ctx: ServerContext,
  verb: 'get' | 'create' | 'update' | 'patch' | 'delete',
  target: Target,
  req: IncomingMessage,
  convert: Conversion | undefined,
  q: URLSearchParams,
  read: () => Promise<unknown> = () => readBody(req),
): Promise<Answer> {
  const { storage } = ctx;
  const type = target.type;
  const render = (o: StoredObject): string => objectJson(o, objectView(convert, type), type);
  const namespace = target.namespace ?? '';
  const name = target.name as string;
  const sub = target.subresource === 'status' ? 'status' : undefined;
  const time = timestamp(Date.now());
  if (target.subresource === 'scale') {
    if (verb !== 'get' && verb !== 'update' && verb !== 'patch') throw new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    return scaleAnswer(ctx, verb, target, req, read, q);
  }
  switch (verb) {
    case 'get': {
      const o = storage.get(type, namespace, name);
      if (o === undefined) throw notFound(type, name);
      return { code: 200, body: render(o), object: o };
    }
    case 'create': {
      const write = { params: writeParams(q, req, 'CreateOptions', false), time };
      const body = await read();
      if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
      if (type.namespaced && target.namespace === undefined) throw pathNotFound();
      const stored = storage.create(type, keepStatus(type, undefined, body, undefined), target.namespace, hooksOf(type, undefined, write));
      return { code: 201, body: render(stored), object: stored };
    }
    case 'update': {
      const write = { params: writeParams(q, req, 'UpdateOptions', false), time };
      const body = await read();
      if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
      const meta = isRecord(body['metadata']) ? body['metadata'] : {};
      if (meta['name'] !== undefined && meta['name'] !== name) {
        throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
      }
      const current = storage.get(type, namespace, name);
      const input = keepStatus(type, sub, { ...body, metadata: { ...meta, name } }, current);
      const stored = storage.update(type, input, target.namespace, sub, hooksOf(type, sub, write));
      // A PUT that created the object (leases allow it) answers 201 Created, as kube-apiserver does.
      return { code: current !== undefined ? 200 : 201, body: render(stored), object: stored };
    }
    case 'patch': {
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
      const write = { params: writeParams(q, req, 'PatchOptions', contentType === APPLY), time };
      const body = await read();
      const existed = storage.get(type, namespace, name) !== undefined;
      const stored = applyPatch(storage, type, namespace, name, contentType, body, sub, write);
      // An apply that created the object answers 201 Created, as kube-apiserver does.
      return { code: existed ? 200 : 201, body: render(stored), object: stored };
    }
    case 'delete': {
      const { dryRun } = writeParams(q, req, 'DeleteOptions', false);
      const body = await read();
      if (dryRun) {
        const current = storage.get(type, namespace, name);
        if (current === undefined) throw notFound(type, name);
        checkPreconditions(type, name, current, preconditionsOf(body));
        return { code: 200, body: render(current), object: current };
      }
      const deleted = ctx.namespaces.delete(type, namespace, name, preconditionsOf(body));
      return { code: 200, body: render(deleted), object: deleted };
    }
  }
}
