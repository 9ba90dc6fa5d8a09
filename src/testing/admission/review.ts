import { randomUUID } from 'node:crypto';
import { printable } from '../../errors/printable.js';
import type { ResourceType } from '../storage/resources.js';
import { StatusError, type StatusErrorDetails } from '../server/status.js';
import { postJson, WebhookCallError } from './call.js';
import type { RegisteredWebhook } from './configurations.js';
import type { AdmissionAttributes } from './matching.js';
import { isRecord } from '../writes/objectRules.js';

// One webhook call: the AdmissionReview kube-apiserver sends, and what its answer means.

type AnyObject = Record<string, unknown>;

const MAX_MESSAGE = 4096;
const MAX_WARNINGS = 64;
const MAX_WARNING = 512;

/** kube-apiserver's ErrCallingWebhook: the webhook could not be asked, or gave an answer that is not one. */
export class CallFailure extends Error {
  override readonly name = 'CallFailure';
  /** The webhook's name in its configuration. */
  readonly webhook: string;

  constructor(webhook: string, reason: string) {
    super(`failed calling webhook ${JSON.stringify(webhook)}: ${reason}`);
    this.webhook = webhook;
  }

  /** The 500 a failing-closed call answers the request with. */
  status(): StatusError {
    return new StatusError(500, 'InternalError', `Internal error occurred: ${this.message}`, { causes: [{ message: this.message }] });
  }
}

/** The admission.k8s.io/v1 AdmissionReview request sent for a request, matched as `as`; `object` and `oldObject` are already in its version. */
export function admissionReview(a: AdmissionAttributes, as: ResourceType, object: AnyObject | undefined, oldObject: AnyObject | undefined): AnyObject {
  const gvk = (t: ResourceType): AnyObject => ({ group: t.group, version: t.version, kind: t.kind });
  const gvr = (t: ResourceType): AnyObject => ({ group: t.group, version: t.version, resource: t.plural });
  const inVersion = (o: AnyObject | undefined): AnyObject | null => (o === undefined ? null : o);
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: a.kind ?? gvk(as),
      resource: gvr(as),
      ...(a.subresource === '' ? {} : { subResource: a.subresource }),
      requestKind: a.kind ?? gvk(a.type),
      requestResource: gvr(a.type),
      ...(a.subresource === '' ? {} : { requestSubResource: a.subresource }),
      name: a.name,
      ...(a.namespace === '' ? {} : { namespace: a.namespace }),
      operation: a.operation,
      userInfo: { username: a.user.username, ...(a.user.uid === undefined ? {} : { uid: a.user.uid }), groups: [...a.user.groups], ...(a.user.extra === undefined ? {} : { extra: a.user.extra }) },
      object: inVersion(object),
      oldObject: inVersion(oldObject),
      dryRun: a.dryRun,
      options: a.options,
    },
  };
}

/** What a webhook answered, once checked. */
export interface WebhookVerdict {
  readonly allowed: boolean;
  /** The refusal, worded as kube-apiserver's ToStatusErr, when not allowed. */
  readonly denial: StatusError | undefined;
  /** The JSON Patch operations of a mutating webhook's `patch` (JSONPatch), if any. */
  readonly patch: unknown[] | undefined;
  readonly warnings: readonly string[];
}

/** A webhook's denial as kube-apiserver's ToStatusErr words it: the webhook's code (at least 400), reason and details kept. */
function denial(name: string, result: unknown): StatusError {
  const r = isRecord(result) ? result : {};
  const given = typeof r['code'] === 'number' && Number.isInteger(r['code']) ? r['code'] : 0;
  const code = given < 400 || given > 599 ? 400 : given;
  const text = (v: unknown): string => (typeof v === 'string' ? printable(v.slice(0, MAX_MESSAGE)) : '');
  const deniedBy = `admission webhook ${JSON.stringify(name)} denied the request`;
  const message = text(r['message']) !== '' ? `${deniedBy}: ${text(r['message'])}` : text(r['reason']) !== '' ? `${deniedBy}: ${text(r['reason'])}` : `${deniedBy} without explanation`;
  const reason = text(r['reason']).slice(0, 128);
  const details = isRecord(r['details']) ? boundedDetails(r['details']) : undefined;
  return new StatusError(code, reason === '' ? '' : reason, message, details);
}

function boundedDetails(d: AnyObject): StatusErrorDetails {
  const s = (v: unknown): string | undefined => (typeof v === 'string' ? printable(v.slice(0, 512)) : undefined);
  const causes = Array.isArray(d['causes'])
    ? d['causes'].slice(0, 32).filter(isRecord).map((c) => ({ ...(s(c['reason']) ? { reason: s(c['reason']) } : {}), ...(s(c['message']) ? { message: s(c['message']) } : {}), ...(s(c['field']) ? { field: s(c['field']) } : {}) }))
    : undefined;
  return { ...(s(d['name']) ? { name: s(d['name']) } : {}), ...(s(d['group']) ? { group: s(d['group']) } : {}), ...(s(d['kind']) ? { kind: s(d['kind']) } : {}), ...(causes === undefined ? {} : { causes }) };
}

/** Checks an answer as kube-apiserver's VerifyAdmissionResponse does; what is wrong is a call failure. */
function verify(w: RegisteredWebhook, uid: string, answer: unknown): WebhookVerdict {
  const wrong = (reason: string): CallFailure => new CallFailure(w.name, `received invalid webhook response: ${reason}`);
  if (!isRecord(answer)) throw wrong('the response is not an object');
  const response = answer['response'];
  if (!isRecord(response)) throw wrong('webhook response was absent');
  if (response['uid'] !== uid) throw wrong(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(printable(String(response['uid'] ?? '').slice(0, 100)))}`);
  if (answer['apiVersion'] !== 'admission.k8s.io/v1' || answer['kind'] !== 'AdmissionReview') {
    const got = `${printable(String(answer['apiVersion'] ?? '').slice(0, 100))}, Kind=${printable(String(answer['kind'] ?? '').slice(0, 100))}`;
    throw wrong(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${got}`);
  }
  const patchText = typeof response['patch'] === 'string' ? response['patch'] : '';
  const patchType = typeof response['patchType'] === 'string' ? response['patchType'] : '';
  const mutating = w.type === 'mutating';
  if (mutating && patchText !== '' && patchType === '') throw wrong('webhook returned response.patch but not response.patchType');
  if (mutating && patchText === '' && patchType !== '') throw wrong('webhook returned response.patchType but not response.patch');
  if (!mutating && patchText !== '') throw wrong('validating webhook may not return response.patch');
  if (!mutating && patchType !== '') throw wrong('validating webhook may not return response.patchType');
  const allowed = response['allowed'] === true;
  const warnings = (Array.isArray(response['warnings']) ? response['warnings'] : [])
    .filter((x): x is string => typeof x === 'string' && x.trim() !== '')
    .slice(0, MAX_WARNINGS)
    .map((x) => printable(x.slice(0, MAX_WARNING)));
  let patch: unknown[] | undefined;
  if (allowed && patchText !== '') {
    if (patchType !== 'JSONPatch') throw new CallFailure(w.name, `unsupported patch type ${JSON.stringify(printable(patchType.slice(0, 100)))}`);
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(patchText, 'base64').toString('utf8'));
    } catch (err) {
      throw new StatusError(500, 'InternalError', `Internal error occurred: ${printable(String(err instanceof Error ? err.message : err).slice(0, 200))}`);
    }
    if (!Array.isArray(ops)) throw new StatusError(500, 'InternalError', 'Internal error occurred: json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    patch = ops;
  }
  return { allowed, denial: allowed ? undefined : denial(w.name, response['status']), patch, warnings };
}

/**
 * Calls one webhook: refuses a dry run it may not see (400, as
 * kube-apiserver's NewDryRunUnsupportedErr), sends the review, and checks
 * the answer. Rejects with a {@link CallFailure} when the webhook could not
 * be asked or answered wrongly; the caller applies the failure policy.
 */
export async function callWebhook(w: RegisteredWebhook, review: AnyObject): Promise<WebhookVerdict> {
  const request = review['request'] as AnyObject;
  if (request['dryRun'] === true) {
    if (w.sideEffects === undefined) throw new CallFailure(w.name, 'Webhook SideEffects is nil');
    if (w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') throw new StatusError(400, 'BadRequest', `admission webhook ${JSON.stringify(w.name)} does not support dry run`);
  }
  if (w.url === undefined) throw new CallFailure(w.name, 'the simulator cannot reach a service clientConfig: register the webhook with a url');
  if (!w.admissionReviewVersions.includes('v1')) {
    throw new CallFailure(w.name, `webhook does not accept known AdmissionReview versions ${JSON.stringify(w.admissionReviewVersions)}: the simulator sends v1`);
  }
  let answer: unknown;
  try {
    answer = await postJson(w.url, w.ca, review, w.timeoutSeconds);
  } catch (err) {
    throw new CallFailure(w.name, err instanceof WebhookCallError ? err.message : printable(String(err).slice(0, 300)));
  }
  return verify(w, String(request['uid']), answer);
}
