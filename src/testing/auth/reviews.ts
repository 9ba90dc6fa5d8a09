import type { AccessAttributes, AccessDecision, UserInfo } from './users.js';
import { printable } from '../../errors/printable.js';
import { badRequest, invalidFields, type FieldCause } from '../server/status.js';
import { isRecord } from '../writes/objectRules.js';

type AnyObject = Record<string, unknown>;

/** The audiences a token is reviewed for when the review names none: kube-apiserver's default `--api-audiences`. */
export const API_AUDIENCES: readonly string[] = ['https://kubernetes.default.svc.cluster.local'];

export const TOKEN_REVIEWS_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
export const ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

const MAX_REASON = 1024;

/**
 * The review a body holds, its kind and apiVersion defaulted from the URL
 * as kube-apiserver's create handler defaults them; another kind or version
 * is 400 in its words, as is a body that is not an object.
 */
function reviewOf(body: unknown, apiVersion: string, kind: string): AnyObject {
  if (!isRecord(body)) throw badRequest(`the request body must be a ${kind} object`);
  const givenVersion = body['apiVersion'];
  if (givenVersion !== undefined && givenVersion !== '' && givenVersion !== apiVersion) {
    throw badRequest(`the API version in the data (${printable(String(givenVersion).slice(0, 100))}) does not match the expected API version (${apiVersion})`);
  }
  const givenKind = body['kind'];
  if (givenKind !== undefined && givenKind !== '' && givenKind !== kind) {
    throw badRequest(`the kind in the data (${printable(String(givenKind).slice(0, 100))}) does not match the expected kind (${kind})`);
  }
  return body;
}

function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : undefined;
}

/**
 * Answers a TokenReview as kube-apiserver's tokenreviews REST storage does:
 * 400 without a token, else the review with `status.authenticated`, `status.user`
 * (empty for a token nobody has) and `status.audiences` (those asked, else the API audiences:
 * the simulator's tokens are audience-agnostic, like a static token file's).
 */
export function tokenReviewAnswer(body: unknown, userOf: (token: string) => UserInfo | undefined): AnyObject {
  const review = reviewOf(body, 'authentication.k8s.io/v1', 'TokenReview');
  const spec = isRecord(review['spec']) ? review['spec'] : {};
  const token = spec['token'];
  if (typeof token !== 'string' || token === '') throw badRequest('token is required for TokenReview in authentication');
  const asked = stringList(spec['audiences']);
  const user = userOf(token);
  const status =
    user === undefined
      ? { user: {} }
      : {
          authenticated: true,
          user: { username: user.username, ...(user.uid === undefined ? {} : { uid: user.uid }), groups: [...user.groups], ...(user.extra === undefined ? {} : { extra: user.extra }) },
          audiences: asked !== undefined && asked.length > 0 ? asked : [...API_AUDIENCES],
        };
  return { kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', metadata: isRecord(review['metadata']) ? review['metadata'] : {}, spec, status };
}

/** The field errors kube-apiserver's ValidateSubjectAccessReview finds in a spec. */
function specCauses(spec: AnyObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const res = spec['resourceAttributes'];
  const non = spec['nonResourceAttributes'];
  if (res != null && non != null) causes.push({ reason: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: 'Invalid value: "object": cannot be specified in combination with resourceAttributes' });
  if (res == null && non == null) causes.push({ reason: 'FieldValueInvalid', field: 'spec.resourceAttributes', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' });
  if ((res != null && !isRecord(res)) || (non != null && !isRecord(non))) causes.push({ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: attributes must be objects' });
  const user = spec['user'];
  const groups = spec['groups'];
  if ((typeof user !== 'string' || user === '') && (!Array.isArray(groups) || groups.length === 0)) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.user', message: 'Invalid value: "": at least one of user or group must be specified' });
  }
  return causes;
}

function stringFields(o: unknown, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(o)) return out;
  for (const n of names) if (typeof o[n] === 'string') out[n] = o[n];
  return out;
}

/** The attributes handed to the `authorize` option: the spec's strings and lists, nothing else. */
function attributesOf(spec: AnyObject): AccessAttributes {
  const extra = isRecord(spec['extra']) ? Object.fromEntries(Object.entries(spec['extra']).filter((e): e is [string, string[]] => stringList(e[1]) !== undefined)) : undefined;
  return {
    user: typeof spec['user'] === 'string' ? spec['user'] : '',
    groups: stringList(spec['groups']) ?? [],
    ...(typeof spec['uid'] === 'string' ? { uid: spec['uid'] } : {}),
    ...(extra === undefined ? {} : { extra }),
    ...(isRecord(spec['resourceAttributes'])
      ? { resourceAttributes: stringFields(spec['resourceAttributes'], ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name']) }
      : {}),
    ...(isRecord(spec['nonResourceAttributes']) ? { nonResourceAttributes: stringFields(spec['nonResourceAttributes'], ['path', 'verb']) } : {}),
  };
}

/**
 * The decision when no `authorize` option is given: members of
 * `system:masters` may do anything (kube-apiserver's privileged group), and
 * nobody else has an opinion given (RBAC with no bindings).
 */
function defaultDecision(a: AccessAttributes): AccessDecision {
  return a.groups.includes('system:masters');
}

/**
 * Answers a SubjectAccessReview as kube-apiserver's REST storage does: 422
 * Invalid for a spec that breaks its validation, else the review with
 * `status.allowed` (always present), `status.denied` and `status.reason`
 * when set, and `status.evaluationError` when the authorizer threw.
 */
export function accessReviewAnswer(body: unknown, authorize: ((a: AccessAttributes) => AccessDecision) | undefined): AnyObject {
  const review = reviewOf(body, 'authorization.k8s.io/v1', 'SubjectAccessReview');
  const spec = isRecord(review['spec']) ? review['spec'] : {};
  const causes = specCauses(spec);
  if (causes.length > 0) throw invalidFields('authorization.k8s.io', 'SubjectAccessReview', causes);
  const attributes = attributesOf(spec);
  let status: AnyObject;
  try {
    const decision = (authorize ?? defaultDecision)(attributes);
    const d = typeof decision === 'boolean' ? { allowed: decision } : isRecord(decision) ? decision : { allowed: false };
    const reason = typeof d.reason === 'string' && d.reason !== '' ? printable(d.reason.slice(0, MAX_REASON)) : undefined;
    status = { allowed: d.allowed === true, ...(d.allowed !== true && d.denied === true ? { denied: true } : {}), ...(reason === undefined ? {} : { reason }) };
  } catch (err) {
    status = { allowed: false, evaluationError: printable(String(err instanceof Error ? err.message : err).slice(0, MAX_REASON)) };
  }
  return { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: isRecord(review['metadata']) ? review['metadata'] : {}, spec, status };
}
