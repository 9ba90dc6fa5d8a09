import { KubeApiError } from '../sources/errors/KubeApiError.js';

/**
 * Tells whether the server refused a write because the object changed since
 * it was read (409, reason `Conflict`): a stale `metadata.resourceVersion`
 * in a replace, or a failed delete precondition. Read again and retry.
 *
 * ## Example
 * ```ts
 * import { isConflict } from 'rxkube';
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
 * import { isAlreadyExists } from 'rxkube';
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
