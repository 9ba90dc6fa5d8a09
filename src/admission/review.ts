// The wire side of an admission webhook: reading an AdmissionReview body, running a handler within
// its deadline, and writing the answer. Shared by the validating and the mutating webhook.
import { printable } from '../errors/printable.js';
import { reportError } from '../errors/reportError.js';
import { AdmissionWebhookError } from './AdmissionWebhookError.js';
import { bounded, MAX_MESSAGE_LENGTH, MAX_WARNING_LENGTH } from './verdict.js';
import type { AdmissionRequest, AdmissionResponse, WebhookAnswer } from './types.js';
import type { WebhookTarget } from './target.js';
import { isRecord } from '../crd/schemaNodes.js';

const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
const MAX_UID_LENGTH = 256;

const isStringOrAbsent = (v: unknown): boolean => v === undefined || typeof v === 'string';

// What readRequest checks, made once rather than per request.
const OBJECT_FIELDS = ['object', 'oldObject'] as const;
const STRING_FIELDS = ['name', 'namespace', 'subResource'] as const;
const NEEDS: Readonly<Record<string, readonly ('object' | 'oldObject')[]>> = { CREATE: ['object'], UPDATE: ['object', 'oldObject'], DELETE: ['oldObject'], CONNECT: [] };

/**
 * Reads the request of an AdmissionReview, or says in a short sentence why
 * the body is not one (the server answers 400 with it).
 */
export function readRequest(body: unknown): AdmissionRequest | string {
  if (!isRecord(body)) return body === undefined ? 'the body is not JSON' : 'the body is not a JSON object';
  if (body.apiVersion !== 'admission.k8s.io/v1') return 'apiVersion must be admission.k8s.io/v1 (register the webhook with admissionReviewVersions: [v1])';
  if (body.kind !== 'AdmissionReview') return 'kind must be AdmissionReview';
  const r = body.request;
  if (!isRecord(r)) return 'the review has no request';
  if (typeof r.uid !== 'string' || r.uid === '' || r.uid.length > MAX_UID_LENGTH) return 'request.uid must be a non-empty string';
  if (typeof r.operation !== 'string' || !OPERATIONS.includes(r.operation)) return 'request.operation must be CREATE, UPDATE, DELETE or CONNECT';
  if (!isRecord(r.kind) || typeof r.kind.kind !== 'string' || typeof r.kind.version !== 'string' || (r.kind.group !== undefined && typeof r.kind.group !== 'string')) {
    return 'request.kind must be a group, version and kind (strings)';
  }
  const resource = r.resource;
  if (!isRecord(resource) || !isStringOrAbsent(resource.group) || !isStringOrAbsent(resource.version) || !isStringOrAbsent(resource.resource)) {
    return 'request.resource must be a group, version and resource (strings)';
  }
  for (const field of OBJECT_FIELDS) {
    if (r[field] !== undefined && r[field] !== null && !isRecord(r[field])) return `request.${field} must be an object or null`;
  }
  for (const field of NEEDS[r.operation] ?? []) {
    if (!isRecord(r[field])) return `request.${field} is required on ${r.operation}`;
  }
  for (const field of STRING_FIELDS) {
    if (!isStringOrAbsent(r[field])) return `request.${field} must be a string`;
  }
  const userProblem = userInfoProblem(r.userInfo);
  if (userProblem !== undefined) return userProblem;
  if (r.dryRun !== undefined && r.dryRun !== null && typeof r.dryRun !== 'boolean') return 'request.dryRun must be a boolean';
  return r as unknown as AdmissionRequest;
}

const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** What is wrong with request.userInfo, which handlers decide on (`groups?.includes('admins')` must not match a string). */
function userInfoProblem(u: unknown): string | undefined {
  if (u === undefined || u === null) return undefined;
  if (!isRecord(u)) return 'request.userInfo must be an object';
  for (const field of ['username', 'uid'] as const) {
    if (u[field] !== undefined && typeof u[field] !== 'string') return `request.userInfo.${field} must be a string`;
  }
  if (u.groups !== undefined && u.groups !== null && !isStrings(u.groups)) return 'request.userInfo.groups must be an array of strings';
  if (u.extra !== undefined && u.extra !== null && (!isRecord(u.extra) || !Object.values(u.extra).every(isStrings))) return 'request.userInfo.extra must map names to arrays of strings';
  return undefined;
}

/** The 400 answer to a body that is not an AdmissionReview. */
export function badRequest(problem: string): WebhookAnswer {
  return { status: 400, body: `not an admission.k8s.io/v1 AdmissionReview: ${problem}`, failure: 'badRequest' };
}

/** A 200 answer carrying a review response; the uid is always the request's. */
export function reviewAnswer(uid: string, response: Omit<AdmissionResponse, 'uid'>, failure?: WebhookAnswer['failure']): WebhookAnswer {
  return {
    status: 200,
    body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { ...response, uid } },
    ...(failure === undefined ? {} : { failure }),
  };
}

/** A denial for a failure on rxkube's or the handler's side: code 500 (400 for a request of another kind). */
export function failureResponse(code: number, message: string): Omit<AdmissionResponse, 'uid'> {
  return { allowed: false, status: { status: 'Failure', code, reason: code === 500 ? 'InternalError' : 'BadRequest', message } };
}

/** `Kind namespace/name`, for messages: from the wire, so escaped and bounded. */
export function describeRequest(request: AdmissionRequest): string {
  const name = request.name === undefined || request.name === '' ? '(generated name)' : request.name;
  const where = request.namespace === undefined || request.namespace === '' ? name : `${request.namespace}/${name}`;
  return bounded(printable(`${request.operation} ${request.kind.kind} ${where}`), 300);
}

/** Whether the request is for the kind the webhook handles (a rule that sends other kinds would break the handler's types). */
export function kindProblem(request: AdmissionRequest, target: WebhookTarget): string | undefined {
  const k = request.kind;
  if ((k.group ?? '') === target.group && k.version === target.version && k.kind === target.kind) return undefined;
  const want = `${target.group === '' ? '' : `${target.group}/`}${target.version} ${target.kind}`;
  const got = bounded(printable(`${k.group === '' || k.group === undefined ? '' : `${k.group}/`}${k.version} ${k.kind}`), 200);
  return `this webhook handles ${want}, but the request is for ${got}; register it with matchPolicy Equivalent and rules for its own resource only`;
}

/**
 * How long a handler may run: a little less than the API server waits
 * (timeoutSeconds), so that a denial for overrunning still reaches it — a
 * quarter of a second per second of timeout kept back, at most one second.
 */
export function handlerDeadlineMs(timeoutSeconds: number): number {
  return timeoutSeconds * 1000 - Math.min(1000, timeoutSeconds * 250);
}

/** What running a handler gave. */
export type HandlerOutcome<R> =
  | { readonly kind: 'done'; readonly value: R }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'left' };

/**
 * Runs a handler with a signal that aborts at the deadline or when the
 * client has gone, and settles at the first of: its result, the deadline,
 * the client leaving. What it throws synchronously counts as a rejection.
 * The client's signal aborting with a `TimeoutError` (the server's own
 * answer deadline) counts as the deadline, not as the client leaving.
 */
export async function runHandler<R>(handler: (signal: AbortSignal) => R | PromiseLike<R>, deadlineMs: number, client: AbortSignal): Promise<HandlerOutcome<R>> {
  const controller = new AbortController();
  const began = performance.now();
  // A handler that answers synchronously (most do) cannot overrun nor see the client leave before it returns: its
  // outcome is known at once, with no timer and no listener. One that returns a promise is raced as below, its
  // deadline counted from the call.
  let pending: { readonly result: R | PromiseLike<R> } | undefined;
  if (!client.aborted) {
    try {
      const result = handler(controller.signal);
      if (!isThenable(result)) return { kind: 'done', value: result };
      pending = { result };
    } catch (error) {
      return { kind: 'threw', error };
    }
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onLeave: (() => void) | undefined;
  const stopped = new Promise<HandlerOutcome<R>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException(`the handler overran its ${deadlineMs} ms deadline`, 'TimeoutError'));
      resolve({ kind: 'timeout' });
    }, Math.max(0, deadlineMs - (performance.now() - began)));
    onLeave = (): void => {
      controller.abort(client.reason);
      // The server giving up on the answer (a TimeoutError) is an overrun to report; anything else is the client leaving.
      resolve({ kind: (client.reason as { name?: unknown } | undefined)?.name === 'TimeoutError' ? 'timeout' : 'left' });
    };
    if (client.aborted) onLeave();
    else client.addEventListener('abort', onLeave, { once: true });
  });
  const ran = (async (): Promise<HandlerOutcome<R>> => {
    try {
      return { kind: 'done', value: await (pending === undefined ? handler(controller.signal) : pending.result) };
    } catch (error) {
      return { kind: 'threw', error };
    }
  })();
  try {
    return await Promise.race([stopped, ran]);
  } finally {
    clearTimeout(timer);
    if (onLeave !== undefined) client.removeEventListener('abort', onLeave);
  }
}

/** Whether `await` would wait on `value` (it has a `then` method); reading `then` may throw, as for `await`. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * The answer to a handler that did not give a verdict: a denial with code
 * 500 (kube-apiserver names the webhook before its message), and the failure reported (`left`: the client has
 * gone, nothing to report and nobody to answer). An overrun under
 * `failurePolicy: Ignore` is allowed instead (WH-11): the early deadline
 * stands in for kube-apiserver's timeout, which would have passed the
 * webhook over.
 */
export function handlerFailure(webhook: string, request: AdmissionRequest, outcome: Exclude<HandlerOutcome<unknown>, { kind: 'done' }>, failurePolicy: 'Fail' | 'Ignore'): WebhookAnswer {
  if (outcome.kind === 'left') return reviewAnswer(request.uid, failureResponse(500, 'the request was abandoned by the client'));
  const what = bounded(outcome.kind === 'timeout' ? 'the handler overran its deadline' : `the handler failed: ${errorText(outcome.error)}`, MAX_MESSAGE_LENGTH);
  // kube-apiserver puts `admission webhook "<name>" denied the request: ` before a denial's message; a warning and a report name it here.
  const message = bounded(`admission webhook ${webhook}: ${what}`, MAX_MESSAGE_LENGTH);
  const ignored = outcome.kind === 'timeout' && failurePolicy === 'Ignore';
  const verdict = ignored ? 'allowed, as its failurePolicy is Ignore' : 'denied';
  reportError(new AdmissionWebhookError(webhook, outcome.kind, `${message} (${describeRequest(request)}, request ${bounded(printable(request.uid), 64)}; ${verdict})`, outcome.kind === 'threw' ? outcome.error : undefined));
  if (ignored) return reviewAnswer(request.uid, { allowed: true, warnings: [bounded(`${message}; ${verdict}`, MAX_WARNING_LENGTH)] }, outcome.kind);
  return reviewAnswer(request.uid, failureResponse(500, what), outcome.kind);
}

/**
 * The answer when one of rxkube's own steps around the handler failed (copying the request for it, computing the
 * patch): denied with 500 and reported as `internal`, so it is not taken for the handler's fault.
 */
export function internalFailure(webhook: string, request: AdmissionRequest, step: string, error: unknown): WebhookAnswer {
  const what = bounded(`rxkube failed ${step}: ${errorText(error)}`, MAX_MESSAGE_LENGTH);
  reportError(new AdmissionWebhookError(webhook, 'internal', bounded(`admission webhook ${webhook}: ${what} (${describeRequestSafely(request)}; denied)`, MAX_MESSAGE_LENGTH * 2), error));
  return reviewAnswer(request.uid, failureResponse(500, what), 'internal');
}

/** describeRequest, or a placeholder when even that fails (a request built by hand with odd fields). */
function describeRequestSafely(request: AdmissionRequest): string {
  try {
    return describeRequest(request);
  } catch {
    return 'a request that cannot be described';
  }
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : typeof error === 'string' ? error : 'a non-Error value was thrown';
  return bounded(printable(text.split('\n', 1)[0] ?? ''), 512);
}

/** The answer to a verdict-free operation refused by rxkube itself: reported, denied with 500. */
export function refuse(webhook: string, request: AdmissionRequest, failure: 'forbiddenPatch' | 'threw', what: string): WebhookAnswer {
  const message = bounded(what, MAX_MESSAGE_LENGTH);
  reportError(new AdmissionWebhookError(webhook, failure, `admission webhook ${webhook}: ${message} (${describeRequest(request)}; denied)`));
  return reviewAnswer(request.uid, failureResponse(500, message), failure);
}
