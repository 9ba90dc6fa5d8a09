// The 'rxkube/zod' entry: helpers built with zod, to embed in a zod schema (a zod object takes only zod schemas).
import { z } from 'zod';
import { CONDITION_LIST, CONDITION_MESSAGE_MAX, CONDITION_REASON_MAX, CONDITION_REASON_PATTERN, CONDITION_STATUSES, CONDITION_TYPE_MAX, CONDITION_TYPE_PATTERN, isRfc3339 } from './conditionRules.js';

/**
 * The zod schema of `metav1.Condition[]`, to embed in a status written with
 * zod: the same bounds and list-map keys as `conditions()` from `rxkube`, so
 * the CRD schema is the same, and zod checks the bounds when it validates.
 *
 * ## Example
 * ```ts
 * import { z } from 'zod';
 * import { customResource } from 'rxkube';
 * import { conditions } from 'rxkube/zod';
 *
 * const Website = customResource({
 *   group: 'example.com', version: 'v1', kind: 'Website',
 *   spec: z.object({ image: z.string() }),
 *   status: z.object({ conditions: conditions().optional() }),
 * });
 * ```
 *
 * @returns A zod array schema.
 */
export function conditions() {
  return z
    .array(
      z.object({
        // RegExp's source writes '/' as '\/': the pattern is given as apimachinery writes it.
        type: z.string().max(CONDITION_TYPE_MAX).regex(new RegExp(CONDITION_TYPE_PATTERN)).meta({ pattern: CONDITION_TYPE_PATTERN }),
        status: z.enum(CONDITION_STATUSES),
        observedGeneration: z.number().int().min(0).optional(),
        lastTransitionTime: z.string().refine(isRfc3339, 'expected an RFC 3339 date-time').meta({ format: 'date-time' }),
        reason: z.string().min(1).max(CONDITION_REASON_MAX).regex(new RegExp(CONDITION_REASON_PATTERN)),
        message: z.string().max(CONDITION_MESSAGE_MAX),
      }),
    )
    .meta({ ...CONDITION_LIST, 'x-kubernetes-list-map-keys': ['type'] });
}
