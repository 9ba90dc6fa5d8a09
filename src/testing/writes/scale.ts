import type { IncomingMessage } from 'node:http';
import type { ServerContext } from '../context.js';
import { evaluate, parseJsonPath, setPath } from '../crd/jsonPath.js';
import type { StoredObject } from '../storage/storedObject.js';
import type { ScalePaths } from '../storage/resources.js';
import { badRequest, conflict, invalidFields, notFound, StatusError } from '../server/status.js';
import type { Target } from '../server/target.js';
import { jsonPatch, mergePatch } from './patch.js';
import { isRecord } from './objectRules.js';
import { writeParams } from './writeParams.js';

// A CRD's `/scale` subresource: the object seen as an autoscaling/v1 Scale through the CRD's replica
// paths, and writes to the Scale's replicas written to the object's spec.

type AnyObject = Record<string, unknown>;

const read = (obj: AnyObject, path: string | undefined): unknown => (path === undefined ? undefined : evaluate(parseJsonPath(path), obj)[0]);

/** The Scale of a stored object; 500 when its spec has no replicas, as apiextensions answers. */
function scaleOf(o: StoredObject, paths: ScalePaths): AnyObject {
  const meta = o.obj['metadata'] as AnyObject;
  const spec = read(o.obj, paths.specReplicasPath);
  if (typeof spec !== 'number') throw new StatusError(500, 'InternalError', `Internal error occurred: the spec replicas field ${JSON.stringify(paths.specReplicasPath)} does not exist`);
  const status = read(o.obj, paths.statusReplicasPath);
  const selector = read(o.obj, paths.labelSelectorPath);
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: meta['name'], ...(meta['namespace'] === undefined ? {} : { namespace: meta['namespace'] }), uid: meta['uid'], resourceVersion: meta['resourceVersion'], creationTimestamp: meta['creationTimestamp'] },
    spec: { replicas: spec },
    status: { replicas: typeof status === 'number' ? status : 0, ...(typeof selector === 'string' ? { selector } : {}) },
  };
}

/** Admission of a Scale write: the mutating webhooks (which may change it) before its checks, the validating ones after. */
export interface ScaleAdmission {
  mutate(next: AnyObject, old: AnyObject, dryRun: boolean): Promise<AnyObject>;
  validate(next: AnyObject, old: AnyObject, dryRun: boolean): Promise<void>;
}

/**
 * Serves GET, PUT and PATCH (merge or JSON patch) of `<plural>/<name>/scale`.
 * A write sets the object's spec replicas and goes through the object's
 * admission like any write; a Scale's resourceVersion, when given, must be
 * the object's.
 */
export async function scaleAnswer(
  ctx: ServerContext,
  verb: 'get' | 'update' | 'patch',
  target: Target,
  req: IncomingMessage,
  body: () => Promise<unknown>,
  q: URLSearchParams,
  admission?: ScaleAdmission,
): Promise<{ code: number; body: string; object: StoredObject }> {
  const type = target.type;
  const paths = type.scale as ScalePaths;
  const name = target.name as string;
  const namespace = target.namespace ?? '';
  const current = ctx.storage.get(type, namespace, name);
  if (current === undefined) throw notFound(type, name);
  const scale = scaleOf(current, paths);
  if (verb === 'get') return { code: 200, body: JSON.stringify(scale), object: current };
  const { dryRun } = writeParams(q, req, verb === 'update' ? 'UpdateOptions' : 'PatchOptions', false);
  const input = await body();
  let next: unknown;
  if (verb === 'update') next = input;
  else {
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    if (contentType === 'application/json-patch+json') next = jsonPatch(scale, input);
    else if (contentType === 'application/merge-patch+json' || contentType === 'application/strategic-merge-patch+json') {
      if (!isRecord(input)) throw badRequest('a merge patch must be a JSON object');
      next = mergePatch(scale, input);
    } else throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
  }
  if (!isRecord(next)) throw badRequest('the request body must be a JSON object');
  const admitted = admission === undefined ? next : await admission.mutate(next, scale, dryRun);
  const replicas = isRecord(admitted['spec']) ? admitted['spec']['replicas'] : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalidFields('autoscaling', 'Scale', [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0` }], name);
  }
  const wantRv = isRecord(admitted['metadata']) ? admitted['metadata']['resourceVersion'] : undefined;
  if (verb === 'update' && wantRv !== undefined && wantRv !== '' && wantRv !== String(current.rv)) {
    throw conflict(type, name, 'the object has been modified; please apply your changes to the latest version and try again');
  }
  await admission?.validate(admitted, scale, dryRun);
  const obj = JSON.parse(current.json) as AnyObject;
  setPath(obj, paths.specReplicasPath, replicas);
  const stored = ctx.storage.update(type, obj, type.namespaced ? namespace : undefined, undefined, { dryRun });
  return { code: 200, body: JSON.stringify(scaleOf(stored, paths)), object: stored };
}
