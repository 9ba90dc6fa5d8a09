import { KubeApiError } from '../errors/api/KubeApiError.js';

/** `conflict with "name"` or `conflict with "name" using apps/v1 [at time]`: the manager is a quoted string. */
const CONFLICT_CAUSE = /^conflict with ("(?:[^"\\]|\\.)*")( using )?/;

/**
 * Tells whether a server-side apply was refused because it would change
 * fields that other field managers own (409 with causes of type
 * `FieldManagerConflict`). Reading again does not help: decide who should
 * own the fields, then apply with `force: true` or leave them out.
 * {@link applyConflicts} names the managers and fields. Such an error is
 * also a 409 `Conflict` to {@link isConflict}, as client-go's
 * `IsConflict` sees it.
 *
 * ## Example
 * ```ts
 * import { isApplyConflict, applyConflicts, type ApplyConfiguration, type ObjectClient } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const deployments: ObjectClient<V1Deployment>;
 * declare const config: ApplyConfiguration<V1Deployment>;
 *
 * try {
 *   await deployments.apply(config, { fieldManager: 'scaler' });
 * } catch (err) {
 *   if (!isApplyConflict(err)) throw err;
 *   for (const c of applyConflicts(err)) console.log(`${c.field} belongs to ${c.manager}`);
 * }
 * ```
 *
 * @param err Anything caught.
 * @returns True for a {@link KubeApiError} of status 409 whose causes name field manager conflicts.
 */
export function isApplyConflict(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && err.status === 409 && (err.details?.details?.causes ?? []).some((c) => c.reason === 'FieldManagerConflict');
}

/**
 * The fields a server-side apply conflicted on, each with the field manager
 * that owns it; empty for any other error.
 *
 * ## Example
 * ```ts
 * import { applyConflicts } from 'rxkube';
 * declare const err: unknown; // what a refused server-side apply threw
 *
 * const owners = applyConflicts(err).map((c) => `${c.manager} owns ${c.field}`);
 * ```
 *
 * @param err Anything caught.
 * @returns One entry per conflicting field, in the server's order.
 */
export function applyConflicts(err: unknown): readonly {
  /** The field manager that owns the field (`kubectl`, `helm`, another controller). */
  readonly manager: string;
  /** How the manager wrote it: `Update` (a create, replace or patch, with its apiVersion) or `Apply`. */
  readonly operation: 'Apply' | 'Update';
  /** The field, as the server names it: `.spec.replicas`, `.metadata.labels.app`. */
  readonly field: string;
  /** The server's own wording: `conflict with "kubectl" using apps/v1`. */
  readonly message: string;
}[] {
  if (!isApplyConflict(err)) return [];
  const out: ReturnType<typeof applyConflicts>[number][] = [];
  for (const cause of err.details?.details?.causes ?? []) {
    if (cause.reason !== 'FieldManagerConflict') continue;
    const message = cause.message ?? '';
    const m = CONFLICT_CAUSE.exec(message);
    let manager = message;
    if (m !== null) {
      try {
        manager = JSON.parse(m[1] as string) as string;
      } catch {
        manager = (m[1] as string).slice(1, -1);
      }
    }
    out.push({ manager, operation: m?.[2] === undefined ? 'Apply' : 'Update', field: cause.field ?? '', message });
  }
  return out;
}
