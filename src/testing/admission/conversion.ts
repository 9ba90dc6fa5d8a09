import { randomUUID } from 'node:crypto';
import { printable } from '../../errors/printable.js';
import type { ResourceRegistry } from '../storage/registry.js';
import type { ResourceType } from '../storage/resources.js';
import type { Storage } from '../storage/storage.js';
import { StatusError } from '../server/status.js';
import { postJson, WebhookCallError } from './call.js';
import { isRecord } from '../writes/objectRules.js';

// CRD conversion through a `spec.conversion.strategy: Webhook` block: apiextensions.k8s.io/v1 ConversionReview calls
// for objects read or written in a version other than the one they are stored in.

type AnyObject = Record<string, unknown>;

const CRD_ID = 'apiextensions.k8s.io/v1/customresourcedefinitions';
/** kube-apiserver gives a conversion webhook 30 seconds, not configurable. */
const CONVERSION_TIMEOUT_SECONDS = 30;

/** A CRD's conversion webhook, for one served version that is not the storage version. */
export interface ConversionWebhook {
  readonly url: string | undefined;
  readonly ca: string | undefined;
  readonly versions: readonly string[];
  /** The served resource of the storage version, where writes go once converted. */
  readonly storageType: ResourceType | undefined;
  readonly storageApiVersion: string;
}

/**
 * The conversion webhook objects of `type` go through, or undefined when
 * `type` is the storage version or its CRD converts with `None` (the
 * apiVersion rewrite of servedVersion.ts).
 */
export function conversionWebhookFor(storage: Storage, registry: ResourceRegistry, type: ResourceType): ConversionWebhook | undefined {
  if (type.storage === undefined || type.storage.apiVersion === type.apiVersion) return undefined;
  return crdConversionWebhook(storage, registry, type);
}

/** The conversion webhook of the CRD that serves `type` (any of its versions), or undefined when it converts with `None`. */
export function crdConversionWebhook(storage: Storage, registry: ResourceRegistry, type: ResourceType): ConversionWebhook | undefined {
  if (type.storage === undefined) return undefined;
  const crdType = registry.byId(CRD_ID);
  if (crdType === undefined) return undefined;
  const crd = storage.get(crdType, '', `${type.plural}.${type.group}`)?.obj;
  const spec = isRecord(crd?.['spec']) ? crd['spec'] : {};
  const conversion = isRecord(spec['conversion']) ? spec['conversion'] : {};
  if (conversion['strategy'] !== 'Webhook') return undefined;
  const webhook = isRecord(conversion['webhook']) ? conversion['webhook'] : {};
  const cc = isRecord(webhook['clientConfig']) ? webhook['clientConfig'] : {};
  const storageVersion = type.storage.version;
  return {
    url: typeof cc['url'] === 'string' ? cc['url'] : undefined,
    ca: typeof cc['caBundle'] === 'string' && cc['caBundle'] !== '' ? Buffer.from(cc['caBundle'], 'base64').toString('utf8') : undefined,
    versions: Array.isArray(webhook['conversionReviewVersions']) ? webhook['conversionReviewVersions'].filter((v): v is string => typeof v === 'string') : [],
    storageType: registry.byPath(type.group, storageVersion, type.plural),
    storageApiVersion: type.storage.apiVersion,
  };
}

/** The failure of a conversion, as kube-apiserver answers it: 500 InternalError naming the object's group, version and kind. */
function conversionFailed(message: string): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

const shown = (v: unknown): string => printable(String(v).slice(0, 100));

/**
 * A converted object checked against its original as apiextensions checks
 * it (the same group/version, kind, name, namespace and uid; labels and
 * annotations of strings), with the original's metadata but the converted
 * labels and annotations; or the reason it is refused.
 */
function checked(original: AnyObject, converted: unknown, desired: string): AnyObject | string {
  if (!isRecord(converted)) return 'invalid object: not a JSON object';
  if (converted['apiVersion'] !== desired) return `invalid groupVersion (expected ${desired}, received ${shown(converted['apiVersion'])})`;
  if (converted['kind'] !== original['kind']) return `invalid kind (expected ${shown(original['kind'])}, received ${shown(converted['kind'])})`;
  const was = isRecord(original['metadata']) ? original['metadata'] : {};
  const now = converted['metadata'];
  if (!isRecord(now)) return 'missing metadata in converted object';
  for (const [f, label] of [['name', 'name'], ['namespace', 'namespace'], ['uid', 'UID']] as const) {
    if ((now[f] ?? '') !== (was[f] ?? '')) return `must have the same ${label}: ${shown(was[f] ?? '')} != ${shown(now[f] ?? '')}`;
  }
  const meta: AnyObject = { ...was };
  for (const f of ['labels', 'annotations']) {
    const given = now[f];
    if (given === undefined || given === null) delete meta[f];
    else if (!isRecord(given) || Object.values(given).some((v) => typeof v !== 'string')) return `metadata.${f} must map names to strings in the converted object`;
    else meta[f] = given;
  }
  return { ...converted, metadata: meta };
}

/**
 * Converts `objects` (all of one resource) to `desired` with one
 * ConversionReview, checking the answer as apiextensions does: the
 * apiVersion and kind of the review, its uid, `result.status: Success`, as
 * many objects as sent, each in the desired version and the same kind and
 * identity. Anything else is kube-apiserver's 500 naming the first
 * object's group/version and kind (`conversion webhook for <gv>, Kind=<kind> failed: …`).
 */
export async function convertObjects(w: ConversionWebhook, objects: readonly AnyObject[], desired: string): Promise<AnyObject[]> {
  const todo = objects.filter((o) => o['apiVersion'] !== desired);
  if (todo.length === 0) return [...objects];
  const first = todo[0] as AnyObject;
  const gvk = `${shown(first['apiVersion'])}, Kind=${shown(first['kind'])}`;
  const fail = (reason: string): StatusError => conversionFailed(`conversion webhook for ${gvk} failed: ${reason}`);
  if (w.url === undefined) throw fail('the simulator cannot reach a service clientConfig: register the conversion webhook with a url');
  if (!w.versions.includes('v1')) throw fail('no supported conversion review versions (the simulator sends v1)');
  const uid = randomUUID();
  let answer: unknown;
  try {
    answer = await postJson(w.url, w.ca, { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion: desired, objects: todo } }, CONVERSION_TIMEOUT_SECONDS);
  } catch (err) {
    throw fail(err instanceof WebhookCallError ? err.message : printable(String(err).slice(0, 300)));
  }
  if (!isRecord(answer) || answer['apiVersion'] !== 'apiextensions.k8s.io/v1' || answer['kind'] !== 'ConversionReview') {
    const got = isRecord(answer) ? `${shown(answer['apiVersion'] ?? '')}, Kind=${shown(answer['kind'] ?? '')}` : 'not an object';
    throw fail(`expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${got}`);
  }
  const response = answer['response'];
  if (!isRecord(response)) throw fail('no response provided');
  if (response['uid'] !== uid) throw fail(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(shown(response['uid'] ?? ''))}`);
  const result = isRecord(response['result']) ? response['result'] : {};
  if (result['status'] !== 'Success') {
    throw fail(typeof result['message'] === 'string' && result['message'] !== '' ? printable(result['message'].slice(0, 4096)) : `response.result.status was '${shown(result['status'] ?? '')}', not 'Success'`);
  }
  const converted = Array.isArray(response['convertedObjects']) ? response['convertedObjects'] : [];
  if (converted.length !== todo.length) throw conversionFailed(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${todo.length}`);
  const out = todo.map((o, i) => {
    const c = checked(o, converted[i], desired);
    if (typeof c === 'string') throw conversionFailed(`conversion webhook for ${gvk} returned invalid converted object at index ${i}: ${c}`);
    return c;
  });
  let next = 0;
  return objects.map((o) => (o['apiVersion'] === desired ? o : (out[next++] as AnyObject)));
}
