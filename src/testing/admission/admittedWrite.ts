import type { IncomingMessage } from 'node:http';
import type { ServerContext } from '../context.js';
import type { UserInfo } from '../auth/users.js';
import type { StoredObject } from '../storage/storedObject.js';
import type { ResourceType } from '../storage/resources.js';
import type { WriteHooks } from '../storage/storage.js';
import { objectView, type Conversion } from '../server/negotiate.js';
import { objectJson } from '../server/partialObjectMetadata.js';
import { badRequest, conflict, notFound } from '../server/status.js';
import { pathNotFound, type Target } from '../server/target.js';
import { APPLY, applyPatch, hooksOf, keepStatus, preconditionsOf, readBody, type Answer, type ApiWrite } from '../writes/objectHandlers.js';
import { checkPreconditions, isRecord, jsonEqual, timestamp } from '../writes/objectRules.js';
import { writeParams, type WriteParams } from '../writes/writeParams.js';
import { dropMissing, readEntries, writeEntries } from '../writes/managedFields.js';
import type { ScaleAdmission } from '../writes/scale.js';
import type { Warn } from './dispatch.js';
import type { AdmissionAttributes } from './matching.js';
import { filterFor } from '../list/listing.js';
import { passes } from '../watch/watch.js';

// A write through the API when webhooks may see it, in kube-apiserver's order: mutating webhooks on the object the
// request would store, then the resource's own defaulting and validation (a dry-run write), then validating webhooks
// on the object as it would be stored, then the write itself.

type AnyObject = Record<string, unknown>;
type WriteVerb = 'create' | 'update' | 'patch' | 'delete';

/** A stored object as the request's version serves it. */
function inVersion(type: ResourceType, o: StoredObject | undefined): AnyObject | undefined {
  if (o === undefined) return undefined;
  const obj = JSON.parse(o.json) as AnyObject;
  return type.storage === undefined ? obj : { ...obj, apiVersion: type.apiVersion };
}

/** A request body as kube-apiserver decodes it before admission: the resource's schema prunes and defaults it (WH-126). */
function decoded(type: ResourceType, obj: AnyObject): AnyObject {
  return type.decode === undefined ? obj : type.decode(obj);
}

/** `request.options`: the write's options object, as kube-apiserver sends it. */
function optionsOf(kind: string, params: WriteParams, q: URLSearchParams, extra: AnyObject = {}): AnyObject {
  const manager = q.get('fieldManager');
  return {
    ...extra,
    kind,
    apiVersion: 'meta.k8s.io/v1',
    ...(params.dryRun ? { dryRun: ['All'] } : {}),
    ...(manager === null || manager === '' ? {} : { fieldManager: manager }),
    ...(params.force ? { force: true } : {}),
  };
}

/** What one request is, for the webhooks and the write. */
interface Request {
  readonly ctx: ServerContext;
  readonly target: Target;
  readonly user: UserInfo;
  readonly warn: Warn;
  readonly sub: 'status' | undefined;
}

function attributes(r: Request, operation: AdmissionAttributes['operation'], name: string, object: AnyObject | undefined, oldObject: AnyObject | undefined, params: WriteParams, options: AnyObject): AdmissionAttributes {
  return { operation, type: r.target.type, subresource: r.sub ?? '', namespace: r.target.namespace ?? '', name, object, oldObject, dryRun: params.dryRun, options, user: r.user };
}

/**
 * Mutates, writes dry, validates, then writes for real unless the request is a dry run. Undefined: the object
 * changed while the webhooks were called (`unchanged` says no more), so nothing was written and the request is
 * to be admitted again on the object as it is now.
 */
async function admitAndWrite(
  r: Request,
  a: AdmissionAttributes,
  perform: (object: AnyObject, hooks: WriteHooks | undefined, dry: boolean) => StoredObject,
  params: WriteParams,
  time: string,
  unchanged: () => boolean,
): Promise<StoredObject | undefined> {
  const { admission } = r.ctx;
  const type = r.target.type;
  const mutated = (await admission.mutate(a, r.warn)) as AnyObject;
  // The dry write below would refuse a mutated object at the resourceVersion read before the webhooks.
  if (!unchanged()) return undefined;
  const hooks = (dryRun: boolean): WriteHooks | undefined => hooksOf(type, r.sub, { params: { ...params, dryRun }, time } satisfies ApiWrite);
  const dry = perform(mutated, hooks(true), true);
  await admission.validate({ ...a, name: dry.name, object: inVersion(type, dry) }, r.warn);
  if (params.dryRun) return dry;
  // Nothing runs between this check and the write below, so the webhooks judged what is replaced.
  if (!unchanged()) return undefined;
  // A generated name is the one the validating webhooks saw.
  const meta = isRecord(mutated['metadata']) ? mutated['metadata'] : {};
  return perform({ ...mutated, metadata: { ...meta, name: dry.name } }, hooks(false), false);
}

/** How many times an update or patch is admitted before a write racing it every time is answered 409. */
const ADMISSION_TRIES = 5;

/**
 * An update or patch of one object admitted as kube-apiserver's
 * GuaranteedUpdate admits it: `attempt` reads the object, calls the
 * webhooks and writes only if the object is still the one it read; when it
 * moved meanwhile, everything is done again on the new object, up to
 * {@link ADMISSION_TRIES} times.
 */
async function guaranteed(type: ResourceType, name: string, attempt: () => Promise<Answer | undefined>): Promise<Answer> {
  for (let i = 0; i < ADMISSION_TRIES; i++) {
    const answered = await attempt();
    if (answered !== undefined) return answered;
  }
  throw conflict(type, name, 'the object has been modified; please apply your changes to the latest version and try again');
}

/**
 * Serves a create, update, patch or delete of one object through the
 * webhooks that concern it; the answer is the one {@link objectAnswer}
 * would give, once every webhook has let it through.
 */
export async function admittedAnswer(
  ctx: ServerContext,
  verb: WriteVerb,
  target: Target,
  req: IncomingMessage,
  convert: Conversion | undefined,
  q: URLSearchParams,
  user: UserInfo,
  warn: Warn,
  read: () => Promise<unknown> = () => readBody(req),
): Promise<Answer> {
  const { storage } = ctx;
  const type = target.type;
  const render = (o: StoredObject): string => objectJson(o, objectView(convert, type), type);
  const namespace = target.namespace ?? '';
  const sub = target.subresource === 'status' ? 'status' : undefined;
  const r: Request = { ctx, target, user, warn, sub };
  const time = timestamp(Date.now());
  const answer = (code: number, o: StoredObject): Answer => ({ code, body: render(o), object: o });
  switch (verb) {
    case 'create': {
      const params = writeParams(q, req, 'CreateOptions', false);
      const body = await read();
      if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
      if (type.namespaced && target.namespace === undefined) throw pathNotFound();
      const meta = isRecord(body['metadata']) ? body['metadata'] : {};
      const input = decoded(type, keepStatus(type, undefined, { ...body, metadata: { ...meta, ...(target.namespace === undefined ? {} : { namespace: target.namespace }) } }, undefined));
      const a = attributes(r, 'CREATE', typeof meta['name'] === 'string' ? meta['name'] : '', input, undefined, params, optionsOf('CreateOptions', params, q));
      // What a mutating webhook patched into the status of a resource with a status subresource is dropped, as the strategy drops it.
      // A create replaces nothing: one racing it is refused by the store (409 AlreadyExists), as kube-apiserver refuses it.
      const stored = await admitAndWrite(r, a, (o, hooks) => storage.create(type, keepStatus(type, undefined, o, undefined), target.namespace, hooks), params, time, () => true);
      return answer(201, stored as StoredObject);
    }
    case 'update': {
      const params = writeParams(q, req, 'UpdateOptions', false);
      const body = await read();
      if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
      const name = target.name as string;
      const meta = isRecord(body['metadata']) ? body['metadata'] : {};
      if (meta['name'] !== undefined && meta['name'] !== name) throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
      return guaranteed(type, name, async () => {
        // Read on every attempt: the status kept on the main resource is the one stored when the write lands.
        const current = storage.get(type, namespace, name);
        const input = decoded(type, keepStatus(type, sub, { ...body, metadata: { ...meta, name } }, current));
        const a = attributes(r, current === undefined ? 'CREATE' : 'UPDATE', name, input, inVersion(type, current), params, optionsOf('UpdateOptions', params, q));
        const unchanged = (): boolean => storage.get(type, namespace, name)?.rv === current?.rv;
        const stored = await admitAndWrite(r, a, (o, hooks) => storage.update(type, keepStatus(type, sub, o, current), target.namespace, sub, hooks), params, time, unchanged);
        return stored === undefined ? undefined : answer(current === undefined ? 201 : 200, stored);
      });
    }
    case 'patch': {
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
      const params = writeParams(q, req, 'PatchOptions', contentType === APPLY);
      const body = await read();
      const name = target.name as string;
      // Each attempt applies the patch to the object as it is then, as kube-apiserver re-applies it on a conflict.
      return guaranteed(type, name, async () => {
        const current = storage.get(type, namespace, name);
        const write = (dryRun: boolean): ApiWrite => ({ params: { ...params, dryRun }, time });
        // The object the patch makes, admitted as the resource admits it, before any webhook sees it.
        const patched = inVersion(type, applyPatch(storage, type, namespace, name, contentType, body, sub, write(true))) as AnyObject;
        const a = attributes(r, current === undefined ? 'CREATE' : 'UPDATE', name, patched, inVersion(type, current), params, optionsOf('PatchOptions', params, q));
        // An apply's ownership is decided before admission, as kube-apiserver's field manager decides it: what the webhooks add is nobody's (WH-147).
        const owned = (hooks: WriteHooks | undefined): WriteHooks | undefined =>
          contentType !== APPLY || hooks === undefined
            ? hooks
            : {
                ...hooks,
                managedFields: (_prev, next) => {
                  const entries = readEntries(patched);
                  dropMissing(entries, next);
                  return writeEntries(entries, time);
                },
              };
        const unchanged = (): boolean => storage.get(type, namespace, name)?.rv === current?.rv;
        const stored = await admitAndWrite(
          r,
          a,
          (o, hooks, dry) =>
            // Unchanged by the webhooks: the patch itself is replayed, so an apply keeps its field ownership.
            jsonEqual(o, patched)
              ? applyPatch(storage, type, namespace, name, contentType, body, sub, write(dry))
              : current === undefined
                ? storage.create(type, keepStatus(type, undefined, o, undefined), target.namespace, owned(hooks))
                : storage.update(type, keepStatus(type, sub, o, current), target.namespace, sub, owned(hooks)),
          params,
          time,
          unchanged,
        );
        return stored === undefined ? undefined : answer(current === undefined ? 201 : 200, stored);
      });
    }
    case 'delete': {
      const params = writeParams(q, req, 'DeleteOptions', false);
      const body = await read();
      const name = target.name as string;
      const current = storage.get(type, namespace, name);
      if (current === undefined) throw notFound(type, name);
      const given = isRecord(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'kind' && k !== 'apiVersion')) : {};
      const a = attributes(r, 'DELETE', name, undefined, inVersion(type, current), params, optionsOf('DeleteOptions', params, q, given));
      await ctx.admission.mutate(a, warn);
      await ctx.admission.validate(a, warn);
      if (params.dryRun) {
        checkPreconditions(type, name, current, preconditionsOf(body));
        return answer(200, current);
      }
      return answer(200, ctx.namespaces.delete(type, namespace, name, preconditionsOf(body)));
    }
  }
}

/**
 * Admits a collection DELETE: every object it would delete goes through
 * the webhooks as a DELETE of its own, in key order, before any is deleted;
 * the first refusal refuses the whole request. (kube-apiserver admits and
 * deletes one object after another, so the objects before a refusal are
 * gone.)
 */
export async function admitCollectionDelete(ctx: ServerContext, target: Target, q: URLSearchParams, req: IncomingMessage, body: unknown, user: UserInfo, warn: Warn): Promise<void> {
  const type = target.type;
  const params = writeParams(q, req, 'DeleteOptions', false);
  const filter = filterFor(target, q);
  const given = isRecord(body) ? Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'kind' && k !== 'apiVersion')) : {};
  const r: Request = { ctx, target, user, warn, sub: undefined };
  for (const o of ctx.storage.list(type, filter.namespace)) {
    if (!passes(filter, o)) continue;
    const a = { ...attributes(r, 'DELETE', o.name, undefined, inVersion(type, o), params, optionsOf('DeleteOptions', params, q, given)), namespace: o.namespace };
    await ctx.admission.mutate(a, warn);
    await ctx.admission.validate(a, warn);
  }
}

/** The autoscaling/v1 kind a `/scale` write is sent to webhooks as. */
const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/**
 * The webhooks of a `/scale` write: an UPDATE of subresource `scale` whose
 * objects are the autoscaling/v1 Scale before and after, as kube-apiserver
 * sends it; mutating webhooks may change the Scale, validating ones see it
 * as it will be written.
 */
export function scaleAdmission(ctx: ServerContext, verb: 'update' | 'patch', target: Target, q: URLSearchParams, req: IncomingMessage, user: UserInfo, warn: Warn): ScaleAdmission {
  const params = writeParams(q, req, verb === 'update' ? 'UpdateOptions' : 'PatchOptions', false);
  const options = optionsOf(verb === 'update' ? 'UpdateOptions' : 'PatchOptions', params, q);
  const r: Request = { ctx, target, user, warn, sub: undefined };
  const attrs = (next: AnyObject, old: AnyObject): AdmissionAttributes => ({
    ...attributes(r, 'UPDATE', target.name as string, next, old, params, options),
    subresource: 'scale',
    kind: SCALE_KIND,
  });
  return {
    mutate: async (next, old) => (await ctx.admission.mutate(attrs(next, old), warn)) as AnyObject,
    validate: (next, old) => ctx.admission.validate(attrs(next, old), warn),
  };
}
