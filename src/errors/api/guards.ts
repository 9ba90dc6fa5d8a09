import { KubeApiError } from './KubeApiError.js';

// The guards follow client-go's k8s.io/apimachinery/pkg/api/errors (IsNotFound,
// IsConflict, …): each accepts anything caught, looks at that error only (not
// its `cause`), and narrows it to the one API error type.

/**
 * Tells whether the API server answered that the object, the resource or its
 * API group does not exist (404, or reason `NotFound`).
 *
 * ## Example
 * ```ts
 * import { isNotFound, type ObjectClient } from 'rxkube';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * declare const configMaps: ObjectClient<V1ConfigMap>;
 *
 * const cm = await configMaps.get('settings').catch((err: unknown) => {
 *   if (isNotFound(err)) return undefined;
 *   throw err;
 * });
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 404 or reason `NotFound`.
 */
export function isNotFound(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 404 || err.reason === 'NotFound');
}

/**
 * Tells whether the server refused a write because the object changed since
 * it was read (409, reason `Conflict`): a stale `metadata.resourceVersion`
 * in a replace, or a failed delete precondition. Read again and retry.
 * A server-side apply refused for fields other managers own is a 409
 * `Conflict` too (as client-go's `IsConflict` sees it), but reading again
 * does not resolve that one: tell it apart with {@link isApplyConflict}.
 *
 * ## Example
 * ```ts
 * import { isConflict, type ObjectClient } from 'rxkube';
 * import type { V1Lease } from '@kubernetes/client-node';
 * declare const leases: ObjectClient<V1Lease>;
 * declare const lease: V1Lease; // as read, with its metadata.resourceVersion
 *
 * try { await leases.replace(lease); } catch (err) { if (!isConflict(err)) throw err; }
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 409 whose reason is `Conflict` (or absent).
 */
export function isConflict(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && err.status === 409 && (err.reason === undefined || err.reason === 'Conflict');
}

/**
 * Tells whether a create was refused because an object of that name exists
 * (409, reason `AlreadyExists`).
 *
 * ## Example
 * ```ts
 * import { isAlreadyExists, type ObjectClient } from 'rxkube';
 * import type { V1ConfigMap } from '@kubernetes/client-node';
 * declare const configMaps: ObjectClient<V1ConfigMap>;
 * declare const cm: V1ConfigMap;
 *
 * try { await configMaps.create(cm); } catch (err) { if (!isAlreadyExists(err)) throw err; }
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 409 with reason `AlreadyExists`.
 */
export function isAlreadyExists(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && err.status === 409 && err.reason === 'AlreadyExists';
}

/**
 * Tells whether the requested resourceVersion or continue token is older than
 * the server keeps (410, or reason `Expired` or `Gone`): client-go's
 * `IsResourceExpired` and `IsGone` together. The reflector answers it by
 * listing again.
 *
 * ## Example
 * ```ts
 * import { isExpired, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (isExpired(err)) console.info('resourceVersion too old; relisting:', err.serverMessage);
 * });
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 410 or reason `Expired` or `Gone`.
 */
export function isExpired(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 410 || err.reason === 'Expired' || err.reason === 'Gone');
}

/**
 * Tells whether the server asked the client to slow down (429, or reason
 * `TooManyRequests`); `err.retryAfterSeconds` holds its `Retry-After`, when
 * it gave one.
 *
 * ## Example
 * ```ts
 * import { isTooManyRequests, type Informer } from 'rxkube';
 * declare const informer: Informer<unknown>;
 *
 * informer.errors$.subscribe((err) => {
 *   if (isTooManyRequests(err)) console.warn(`throttled; retrying in ${err.retryAfterSeconds ?? '?'} s`);
 * });
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 429 or reason `TooManyRequests`.
 */
export function isTooManyRequests(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 429 || err.reason === 'TooManyRequests');
}

/**
 * Tells whether the server refused the credentials (401, or reason
 * `Unauthorized`): an expired token or a certificate it does not trust.
 *
 * ## Example
 * ```ts
 * import { isUnauthorized } from 'rxkube';
 * const explain = (err: unknown): string => (isUnauthorized(err) ? 'credentials refused; log in again' : String(err));
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 401 or reason `Unauthorized`.
 */
export function isUnauthorized(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 401 || err.reason === 'Unauthorized');
}

/**
 * Tells whether the identity may not make this request (403, or reason
 * `Forbidden`): an RBAC rule is missing.
 *
 * ## Example
 * ```ts
 * import { isForbidden, kubeSource } from 'rxkube';
 * import { reflect } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * // stop, rather than retry, when RBAC forbids the list or watch
 * reflect(kubeSource(kc, 'v1/pods'), { onTerminal: isForbidden }).subscribe();
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 403 or reason `Forbidden`.
 */
export function isForbidden(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 403 || err.reason === 'Forbidden');
}

/**
 * Tells whether the server rejected the object as invalid (422, or reason
 * `Invalid`); the Status causes name the fields.
 *
 * ## Example
 * ```ts
 * import { isInvalid } from 'rxkube';
 * const fields = (err: unknown): string[] => (isInvalid(err) ? (err.details?.details?.causes ?? []).map((c) => c.field ?? '') : []);
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 422 or reason `Invalid`.
 */
export function isInvalid(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && (err.status === 422 || err.reason === 'Invalid');
}

/**
 * Tells whether the server failed rather than refused (any 5xx: an internal
 * error, a timeout, an unavailable etcd). Retrying later may succeed.
 *
 * ## Example
 * ```ts
 * import { isServerError } from 'rxkube';
 * const retryable = (err: unknown): boolean => isServerError(err);
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} whose status is 500 to 599.
 */
export function isServerError(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && err.status >= 500 && err.status <= 599;
}
