import type { ObjectOf } from '../sources/resources.js';
import type { KubeObject } from '../store/types.js';
import { describeValue } from '../options/validate.js';
import { contextOf, type MutatingHandler, type OperationsOf, type ValidatingHandler } from './context.js';
import { parseWebhookOptions, type MutatingWebhookOptions, type ParsedWebhookOptions, type WebhookOptions } from './options.js';
import { admissionPatch, asJson } from './patch.js';
import { cloneRequestObject } from './plainJson.js';
import { badRequest, handlerDeadlineMs, handlerFailure, internalFailure, kindProblem, readRequest, refuse, reviewAnswer, failureResponse, runHandler } from './review.js';
import { webhookTarget, type AdmissionResource, type WebhookTarget } from './target.js';
import type { AdmissionRequest, AdmissionResponse, Operation, Webhook, WebhookAnswer } from './types.js';
import { isVerdict, type AdmissionVerdict } from './verdict.js';

/** An admission webhook: what the runner serves and `webhookManifests` registers. */
export interface AdmissionWebhook<T extends KubeObject = KubeObject> extends Webhook {
  readonly type: 'validating' | 'mutating';
  /** Its name in the webhook configuration. */
  readonly name: string;
  /** The resource it is for. */
  readonly target: WebhookTarget;
  /** Its options, defaults filled in. */
  readonly options: ParsedWebhookOptions;
  /**
   * Reviews one typed request, as `review` does once the body is read: for
   * unit tests of a handler. Never rejects.
   */
  reviewRequest(request: AdmissionRequest<T>, signal: AbortSignal): Promise<WebhookAnswer>;
}

/** A validating webhook made by `admission.validating`. */
export interface ValidatingWebhook<T extends KubeObject = KubeObject> extends AdmissionWebhook<T> {
  readonly type: 'validating';
}

/** A mutating webhook made by `admission.mutating`. */
export interface MutatingWebhook<T extends KubeObject = KubeObject> extends AdmissionWebhook<T> {
  readonly type: 'mutating';
}

/**
 * Whether a webhook is a validating or mutating one with its name, resource
 * and options, as `admission.validating` and `admission.mutating` make them.
 * By shape, not by identity: `rxkube manifests` reads a module that may
 * resolve 'rxkube' to another copy than the command's own.
 */
export function isAdmissionWebhook(value: Webhook): value is AdmissionWebhook {
  const w = value as Partial<AdmissionWebhook>;
  const t = w.target as Partial<WebhookTarget> | undefined;
  const o = w.options as Partial<ParsedWebhookOptions> | undefined;
  return (
    (w.type === 'validating' || w.type === 'mutating') && typeof w.name === 'string' &&
    typeof t?.group === 'string' && typeof t.version === 'string' && typeof t.plural === 'string' && typeof t.namespaced === 'boolean' &&
    Array.isArray(o?.operations) && typeof o.timeoutSeconds === 'number' && typeof o.failurePolicy === 'string' && typeof o.sideEffects === 'string'
  );
}

type Handler = (ctx: unknown) => unknown;
type Decide = (request: AdmissionRequest, signal: AbortSignal, options: ParsedWebhookOptions, call: Handler) => Promise<WebhookAnswer>;

/** Checks a webhook's resource, its handler and its options, in that order, and serves what `decide` answers. */
function makeWebhook<W extends AdmissionWebhook>(type: W['type'], resource: unknown, handler: unknown, opts: unknown, decide: Decide): W {
  const where = `admission.${type}`;
  const target = webhookTarget(where, resource);
  if (typeof handler !== 'function') throw new TypeError(`${where}: handler must be a function, got ${describeValue(handler)}`);
  const options = parseWebhookOptions(where, type, target, opts);
  const decideChecked = async (request: AdmissionRequest, signal: AbortSignal): Promise<WebhookAnswer> => {
    try {
      const problem = kindProblem(request, target);
      if (problem !== undefined) return reviewAnswer(request.uid, failureResponse(400, problem), 'badRequest');
      return await decide(request, signal, options, handler as Handler);
    } catch (err) {
      // The handler's own errors are caught by runHandler: what gets here is rxkube's, and is reported as such.
      return internalFailure(options.name, request, 'answering the request', err);
    }
  };
  // Not async itself: decideChecked is, and never rejects; a second promise around it would only cost.
  const review = (body: unknown, signal: AbortSignal): Promise<WebhookAnswer> => {
    let request: AdmissionRequest | string;
    try {
      request = readRequest(body);
    } catch {
      // Only a body that is not plain parsed JSON (a getter that throws) gets here.
      request = 'the body is not plain JSON';
    }
    return typeof request === 'string' ? Promise.resolve(badRequest(request)) : decideChecked(request, signal);
  };
  // A request built by hand in a test is checked as a body's is.
  const reviewRequest = (request: AdmissionRequest, signal: AbortSignal): Promise<WebhookAnswer> =>
    review({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }, signal);
  return Object.freeze({ type, path: options.path, timeoutSeconds: options.timeoutSeconds, name: options.name, target, options, review, reviewRequest }) as unknown as W;
}

function verdictResponse(verdict: AdmissionVerdict): Omit<AdmissionResponse, 'uid'> {
  return {
    allowed: verdict.allowed,
    ...(verdict.status === undefined ? {} : { status: verdict.status }),
    ...(verdict.warnings.length === 0 ? {} : { warnings: verdict.warnings }),
  };
}

/**
 * A validating admission webhook: kube-apiserver asks it whether a write of
 * `resource` may go ahead, after every mutating webhook and schema check.
 *
 * The handler gets the object (typed for the resource), the stored object
 * on UPDATE and DELETE, who is writing and whether it is a dry run, and
 * returns `admission.allow()` or `admission.deny(message)`. It runs within a
 * deadline a little shorter than `timeoutSeconds`; its `signal` aborts then.
 * A handler that throws, rejects or overruns denies the request with code
 * 500 and a message saying what failed (kube-apiserver names the webhook
 * before it), and the error is reported; an
 * overrun under `failurePolicy: 'Ignore'` allows it with a warning instead,
 * as kube-apiserver passes over a webhook that timed out.
 *
 * ## Example
 * ```ts
 * import { admission } from 'rxkube';
 *
 * export const validateDeployments = admission.validating('apps/v1/deployments', ({ object, userInfo }) =>
 *   (object.spec?.replicas ?? 1) > 10 && !userInfo.groups?.includes('admins')
 *     ? admission.deny('at most 10 replicas for non-admins', { field: 'spec.replicas' })
 *     : admission.allow(),
 * );
 * console.log(validateDeployments.path); // /validate-apps-v1-deployment
 * ```
 *
 * @param resource a built-in resource name (`'apps/v1/deployments'`) or a `customResource` definition.
 * @param handler decides each request.
 * @param opts path, operations, failure policy, side effects, timeout, selectors, name.
 * @returns the webhook, for `runManager({ webhooks })` and `webhookManifests`.
 * @throws TypeError naming a bad option.
 */
export function validating<R extends AdmissionResource, const Op extends Operation | '*' = 'CREATE' | 'UPDATE'>(
  resource: R,
  handler: ValidatingHandler<ObjectOf<R>, OperationsOf<Op>>,
  opts?: WebhookOptions<Op>,
): ValidatingWebhook<ObjectOf<R>> {
  return makeWebhook<ValidatingWebhook<ObjectOf<R>>>('validating', resource, handler, opts, async (request, signal, options, call) => {
    const outcome = await runHandler((s) => call(contextOf(request, s, request.object)), handlerDeadlineMs(options.timeoutSeconds), signal);
    if (outcome.kind !== 'done') return handlerFailure(options.name, request, outcome, options.failurePolicy);
    if (!isVerdict(outcome.value)) return refuse(options.name, request, 'threw', `the handler returned ${describeValue(outcome.value)}, not admission.allow() or admission.deny()`);
    return reviewAnswer(request.uid, verdictResponse(outcome.value));
  });
}

/**
 * A mutating admission webhook: kube-apiserver lets it change an object of
 * `resource` before it is validated and stored (defaulting, injecting).
 *
 * The handler returns the object it wants — a changed copy, or the object it
 * was given changed in place (it gets its own copy) — and rxkube answers with
 * the RFC 6902 JSON Patch from what was sent to that. A change of
 * `metadata.name`, `metadata.namespace`, `metadata.uid`, `apiVersion` or
 * `kind` is refused: the request is denied and the error reported. Return
 * `admission.deny(…)` to refuse the request, `admission.allow({ warnings })`
 * to leave the object alone with warnings. On DELETE there is no object to
 * change (`object` is undefined): return a verdict.
 *
 * ## Example
 * ```ts
 * import { admission } from 'rxkube';
 *
 * export const defaultDeployments = admission.mutating('apps/v1/deployments', ({ object }) => ({
 *   ...object,
 *   metadata: { ...object.metadata, labels: { team: 'web', ...object.metadata?.labels } },
 * }));
 * console.log(defaultDeployments.path); // /mutate-apps-v1-deployment
 * ```
 *
 * @param resource a built-in resource name (`'apps/v1/deployments'`) or a `customResource` definition.
 * @param handler returns the wanted object, or a verdict.
 * @param opts path, operations, failure policy, side effects, timeout, selectors, reinvocation policy, name.
 * @returns the webhook, for `runManager({ webhooks })` and `webhookManifests`.
 * @throws TypeError naming a bad option.
 */
export function mutating<R extends AdmissionResource, const Op extends Operation | '*' = 'CREATE' | 'UPDATE'>(
  resource: R,
  handler: MutatingHandler<ObjectOf<R>, OperationsOf<Op>>,
  opts?: MutatingWebhookOptions<Op>,
): MutatingWebhook<ObjectOf<R>> {
  return makeWebhook<MutatingWebhook<ObjectOf<R>>>('mutating', resource, handler, opts, async (request, signal, options, call) => {
    // The handler may change what it is given in place, through object, oldObject or request: it gets copies, so the
    // patch base (the object as sent, or on DELETE the oldObject) stays as sent.
    let given: KubeObject | undefined;
    let givenOld: KubeObject | null | undefined;
    try {
      given = request.object === null || request.object === undefined ? undefined : cloneRequestObject(request.object);
      givenOld = given === undefined && request.oldObject !== null && request.oldObject !== undefined ? cloneRequestObject(request.oldObject) : request.oldObject;
    } catch (err) {
      return internalFailure(options.name, request, 'copying the object for the handler', err);
    }
    const seen: AdmissionRequest = { ...request, object: given ?? request.object, oldObject: givenOld };
    const outcome = await runHandler((s) => call(contextOf(seen, s, given)), handlerDeadlineMs(options.timeoutSeconds), signal);
    if (outcome.kind !== 'done') return handlerFailure(options.name, request, outcome, options.failurePolicy);
    if (isVerdict(outcome.value)) return reviewAnswer(request.uid, verdictResponse(outcome.value));
    return patchAnswer(options.name, request, outcome.value);
  });
}

function patchAnswer(webhook: string, request: AdmissionRequest, returned: unknown): WebhookAnswer {
  if (typeof returned !== 'object' || returned === null || Array.isArray(returned)) {
    return refuse(webhook, request, 'threw', `the handler returned ${describeValue(returned)}, not an object or a verdict`);
  }
  let wanted: unknown;
  try {
    wanted = asJson(returned);
  } catch (err) {
    return refuse(webhook, request, 'threw', `the object the handler returned is not JSON (${(err as Error).name})`);
  }
  const hasObject = request.object !== null && request.object !== undefined && request.operation !== 'CONNECT';
  const original = hasObject ? request.object : request.oldObject;
  if (original === null || original === undefined) return refuse(webhook, request, 'forbiddenPatch', `there is no object to change on ${request.operation}; return a verdict`);
  let diff: ReturnType<typeof admissionPatch>;
  try {
    diff = admissionPatch(original, wanted);
  } catch (err) {
    return internalFailure(webhook, request, 'computing the patch', err);
  }
  if ('forbidden' in diff) return refuse(webhook, request, 'forbiddenPatch', `the handler changed ${diff.forbidden}, which admission may not change`);
  if (diff.ops.length === 0) return reviewAnswer(request.uid, { allowed: true });
  if (!hasObject) return refuse(webhook, request, 'forbiddenPatch', `the handler changed the object on ${request.operation}, where there is nothing to patch; return a verdict`);
  return reviewAnswer(request.uid, { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(diff.ops)).toString('base64') });
}
