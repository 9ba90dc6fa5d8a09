import type { KubeObject } from '../store/types.js';

/** What an admission request does: kube-apiserver's `operation`. */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** A group, version and kind, as an AdmissionRequest names the object's type (`''` is the core group). */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** A group, version and resource (the plural), as an AdmissionRequest names the resource. */
export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** Who made the request, as kube-apiserver authenticated them (`authentication.k8s.io/v1` UserInfo). */
export interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The request of an `admission.k8s.io/v1` AdmissionReview, with the objects
 * typed: `object` is what is being written (absent on DELETE), `oldObject`
 * what was stored (UPDATE and DELETE).
 */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** Identifies this request; the response carries it back. */
  readonly uid: string;
  /** The type of `object` and `oldObject`, in the version the webhook registered for. */
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  /** The type the client wrote, when kube-apiserver converted it (matchPolicy Equivalent). */
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly requestSubResource?: string;
  /** The object's name; empty on a CREATE whose name the server generates. */
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** null on DELETE; the connect options on CONNECT. */
  readonly object?: T | null;
  /** The stored object on UPDATE and DELETE. */
  readonly oldObject?: T | null;
  /** True when nothing is persisted: the webhook must not cause side effects it cannot undo. */
  readonly dryRun?: boolean;
  /** The operation's options: CreateOptions, UpdateOptions, DeleteOptions, PatchOptions. */
  readonly options?: Readonly<Record<string, unknown>> | null;
}

/** The `metav1.Status` a denial carries. */
export interface AdmissionStatus {
  readonly status?: 'Success' | 'Failure';
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: { readonly causes?: readonly { readonly field?: string; readonly message?: string; readonly reason?: string }[] };
}

/** The response of an `admission.k8s.io/v1` AdmissionReview. */
export interface AdmissionResponse {
  /** The request's uid. */
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  /** A base64 RFC 6902 JSON Patch (mutating webhooks only). */
  readonly patch?: string;
  readonly patchType?: 'JSONPatch';
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

/** An `admission.k8s.io/v1` AdmissionReview, as kube-apiserver sends it (with `request`) or receives it (with `response`). */
export interface AdmissionReview<T extends KubeObject = KubeObject> {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly request?: AdmissionRequest<T>;
  readonly response?: AdmissionResponse;
}

/** What the webhook server writes back: an HTTP status and a JSON body. */
export interface WebhookAnswer {
  readonly status: number;
  /** A JSON value: the AdmissionReview (ConversionReview) answer, or a short explanation on 400. */
  readonly body: unknown;
  /**
   * Set when the answer reports a failure rather than the handler's verdict: how the review went wrong on
   * rxkube's side, for the server's counters (the handler threw or rejected, overran its deadline, asked for a
   * patch admission may not apply, or the body was not a review).
   */
  readonly failure?: 'threw' | 'timeout' | 'forbiddenPatch' | 'badRequest' | 'internal';
}

/**
 * A webhook as the runner's HTTPS server sees it: a path and a function
 * from a request body to an answer. `admission.validating`,
 * `admission.mutating` and `admission.conversion` make them; `runManager`
 * serves them (`webhooks: [...]`) and `webhookManifests` registers them.
 *
 * ## Example
 * ```ts
 * import { admission, type Webhook } from 'rxkube';
 *
 * const hook: Webhook = admission.validating('v1/pods', () => admission.allow());
 * const answer = await hook.review({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, AbortSignal.timeout(5_000));
 * console.log(hook.path, answer.status); // /validate--v1-pod 400
 * ```
 */
export interface Webhook {
  readonly type: 'validating' | 'mutating' | 'conversion';
  /** The URL path it is served at: `/validate-example-com-v1-website`, `/convert`. */
  readonly path: string;
  /**
   * How long kube-apiserver waits for an answer (an admission webhook's
   * `timeoutSeconds`); the server waits at least that long for `review`.
   * Absent for a conversion webhook: the server waits `serverLimits.answerTimeoutMs`.
   */
  readonly timeoutSeconds?: number;
  /**
   * Answers one request body, already read and JSON-parsed by the server
   * (`undefined` when it was not JSON). Never throws or rejects: a body
   * that is not a review gets status 400; a handler that throws, rejects or
   * overruns its deadline gives a 200 review that denies, with
   * status.code 500 and a message saying what failed (kube-apiserver names the webhook before it), and is reported (an
   * overrun under failurePolicy Ignore allows, with a warning).
   *
   * @param body the parsed request body.
   * @param signal aborted when the client has gone: the handler's own signal aborts with it.
   * @returns the status and body to write.
   */
  review(body: unknown, signal: AbortSignal): Promise<WebhookAnswer>;
}
