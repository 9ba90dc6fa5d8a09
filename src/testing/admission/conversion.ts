import { randomUUID } from 'node:crypto';
import { printable } from '../../errors/printable.js';
import type { ResourceRegistry } from '../storage/registry.js';
import type { ResourceType } from '../storage/resources.js';
import type { Storage } from '../storage/storage.js';
import { StatusError } from '../server/status.js';
import { postJson, WebhookCallError } from './call.js';

// CRD conversion through a `spec.conversion.strategy: Webhook` block: apiextensions.k8s.io/v1 ConversionReview calls
// for objects read or written in a version other than the one they are stored in.

type AnyObject = Record<string, unknown>;

const CRD_ID = 'apiextensions.k8s.io/v1/customresourcedefinitions';
/** kube-apiserver gives a conversion webhook 30 seconds, not configurable. */
const CONVERSION_TIMEOUT_SECONDS = 30;

function isRecord(v: unknown): v is AnyObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

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

/** The failure of a conversion, as kube-apiserver answers it: 500 InternalError naming the object's version and kind. */
function conversionFailed(from: string, kind: string, reason: string): StatusError {
  const message = `conversion webhook for ${from}, Kind=${kind} failed: ${reason}`;
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** A converted object checked against its original as apiextensions checks it: only labels and annotations of the metadata may change. */
function checked(original: AnyObject, converted: unknown, desired: string, index: number): AnyObject {
  if (!isRecord(converted)) throw new Error(`invalid converted object at index ${index}: not an object`);
  if (converted['apiVersion'] !== desired) throw new Error(`invalid converted object at index ${index}: invalid apiVersion ${JSON.stringify(printable(String(converted['apiVersion']).slice(0, 100)))}, expected ${JSON.stringify(desired)}`);
  if (converted['kind'] !== original['kind']) throw new Error(`invalid converted object at index ${index}: invalid kind ${JSON.stringify(printable(String(converted['kind']).slice(0, 100)))}, expected ${JSON.stringify(original['kind'])}`);
  const was = isRecord(original['metadata']) ? original['metadata'] : {};
  const now = isRecord(converted['metadata']) ? converted['metadata'] : {};
  for (const f of ['name', 'namespace', 'uid']) {
    if (now[f] !== was[f]) throw new Error(`invalid converted object at index ${index}: must not change metadata.${f}`);
  }
  const meta: AnyObject = { ...was };
  for (const f of ['labels', 'annotations']) {
    if (now[f] === undefined) delete meta[f];
    else meta[f] = now[f];
  }
  return { ...converted, metadata: meta };
}

/**
 * Converts `objects` (all of one version and kind) to `desired` with one
 * ConversionReview, checking the answer: the uid, `result.status: Success`,
 * as many objects as sent, each in the desired apiVersion and the same
 * kind, with no metadata changed but labels and annotations. Anything else
 * is kube-apiserver's 500 `conversion webhook for <gv>, Kind=<kind> failed: …`.
 */
export async function convertObjects(w: ConversionWebhook, objects: readonly AnyObject[], desired: string): Promise<AnyObject[]> {
  const todo = objects.filter((o) => o['apiVersion'] !== desired);
  if (todo.length === 0) return [...objects];
  const first = todo[0] as AnyObject;
  const fail = (reason: string): StatusError => conversionFailed(String(first['apiVersion']), String(first['kind']), reason);
  if (w.url === undefined) throw fail('the simulator cannot reach a service clientConfig: register the conversion webhook with a url');
  if (!w.versions.includes('v1')) throw fail(`webhook does not accept known ConversionReview versions ${JSON.stringify(w.versions)}: the simulator sends v1`);
  const uid = randomUUID();
  let answer: unknown;
  try {
    answer = await postJson(w.url, w.ca, { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid, desiredAPIVersion: desired, objects: todo } }, CONVERSION_TIMEOUT_SECONDS);
  } catch (err) {
    throw fail(err instanceof WebhookCallError ? err.message : printable(String(err).slice(0, 300)));
  }
  const response = isRecord(answer) ? answer['response'] : undefined;
  if (!isRecord(response)) throw fail('no response provided');
  if (response['uid'] !== uid) throw fail(`expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(printable(String(response['uid'] ?? '').slice(0, 100)))}`);
  const result = isRecord(response['result']) ? response['result'] : {};
  if (result['status'] !== 'Success') throw fail(typeof result['message'] === 'string' && result['message'] !== '' ? printable(result['message'].slice(0, 4096)) : 'the conversion webhook did not answer Success');
  const converted = Array.isArray(response['convertedObjects']) ? response['convertedObjects'] : [];
  if (converted.length !== todo.length) throw fail(`returned ${converted.length} objects, expected ${todo.length}`);
  let out: AnyObject[];
  try {
    out = todo.map((o, i) => checked(o, converted[i], desired, i));
  } catch (err) {
    throw fail((err as Error).message);
  }
  let next = 0;
  return objects.map((o) => (o['apiVersion'] === desired ? o : (out[next++] as AnyObject)));
}
