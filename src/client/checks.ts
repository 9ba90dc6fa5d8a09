import type { KubeObject } from '../store/types.js';
import type { CallOptions, DeleteOptions, PatchOptions } from './types.js';
import { describeValue } from '../options/validate.js';

type PatchType = NonNullable<PatchOptions['type']>;

// The checks an object client makes before sending anything: a mistake in a call throws a TypeError
// naming the argument and the value, synchronously, and no request goes out.

/** kube-apiserver refuses longer field manager names. */
const MANAGER_LIMIT = 128;

export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export function checkName(name: unknown, label = 'name'): asserts name is string {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/')) {
    throw new TypeError(`${label}: expected an object name, got ${describeValue(name)}`);
  }
}

export function checkObject(obj: KubeObject, verb: string, needsName: boolean): void {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new TypeError(`obj: ${verb} expects an object, got ${describeValue(obj)}`);
  if (needsName) checkName(obj.metadata?.name, 'metadata.name');
}

/** The signal of a call's options, the options checked to be an object. */
export function checkSignal(o: CallOptions | undefined): AbortSignal | undefined {
  if (o === undefined) return undefined;
  if (o === null || typeof o !== 'object') throw new TypeError(`opts: expected an object, got ${describeValue(o)}`);
  const s = o.signal;
  if (s !== undefined && !(s instanceof AbortSignal)) throw new TypeError(`signal: expected an AbortSignal, got ${describeValue(s)}`);
  return s;
}

export function checkBoolean(value: unknown, option: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`${option}: expected a boolean, got ${describeValue(value)}`);
  return value;
}

/** A field manager name kube-apiserver accepts: 1 to 128 printable characters. */
export function checkFieldManager(value: unknown, option = 'fieldManager'): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || value.length > MANAGER_LIMIT || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new TypeError(`${option}: expected 1 to ${MANAGER_LIMIT} printable characters, got ${describeValue(value)}`);
  }
  return value;
}

/** The content type of a patch of `type`, after checking that `body` has that patch's shape. */
export function patchContentType(type: unknown, body: unknown): string {
  const kind = type ?? 'merge';
  if (typeof kind !== 'string' || !Object.hasOwn(PATCH_CONTENT_TYPES, kind)) {
    throw new TypeError(`type: expected 'merge', 'json' or 'strategic', got ${describeValue(kind)}`);
  }
  if (kind === 'json' ? !Array.isArray(body) : body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new TypeError(`body: a ${kind} patch must be ${kind === 'json' ? 'an array of operations' : 'an object'}, got ${describeValue(body)}`);
  }
  return PATCH_CONTENT_TYPES[kind as PatchType];
}

/** The `DeleteOptions` body of a delete, or undefined when there is nothing to say. */
export function deleteBody(o: DeleteOptions | undefined): object | undefined {
  if (o === undefined) return undefined;
  const body: Record<string, unknown> = {};
  const pre = o.preconditions;
  if (pre !== undefined) {
    if (pre === null || typeof pre !== 'object') throw new TypeError(`preconditions: expected { uid?, resourceVersion? }, got ${describeValue(pre)}`);
    for (const key of ['uid', 'resourceVersion'] as const) {
      const v = pre[key];
      if (v !== undefined && (typeof v !== 'string' || v === '')) throw new TypeError(`preconditions.${key}: expected a non-empty string, got ${describeValue(v)}`);
    }
    body['preconditions'] = { ...(pre.uid !== undefined && { uid: pre.uid }), ...(pre.resourceVersion !== undefined && { resourceVersion: pre.resourceVersion }) };
  }
  if (o.propagationPolicy !== undefined) {
    if (!['Orphan', 'Background', 'Foreground'].includes(o.propagationPolicy)) {
      throw new TypeError(`propagationPolicy: expected 'Orphan', 'Background' or 'Foreground', got ${describeValue(o.propagationPolicy)}`);
    }
    body['propagationPolicy'] = o.propagationPolicy;
  }
  if (o.gracePeriodSeconds !== undefined) {
    if (!Number.isSafeInteger(o.gracePeriodSeconds) || o.gracePeriodSeconds < 0) {
      throw new TypeError(`gracePeriodSeconds: expected a non-negative integer, got ${describeValue(o.gracePeriodSeconds)}`);
    }
    body['gracePeriodSeconds'] = o.gracePeriodSeconds;
  }
  return Object.keys(body).length === 0 ? undefined : { kind: 'DeleteOptions', apiVersion: 'v1', ...body };
}
