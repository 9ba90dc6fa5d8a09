// The 'rxkube/valibot' entry: helpers built with valibot, to embed in a valibot schema (a valibot object takes only valibot schemas).
import * as v from 'valibot';
import { CONDITION_LIST, CONDITION_MESSAGE_MAX, CONDITION_REASON_MAX, CONDITION_REASON_PATTERN, CONDITION_STATUSES, CONDITION_TYPE_MAX, CONDITION_TYPE_PATTERN } from './conditionRules.js';

/**
 * The valibot schema of `metav1.Condition[]`, to embed in a status written
 * with valibot (then wrapped with `toStandardJsonSchema`): the same bounds
 * and list-map keys as `conditions()` from `rxkube`, so the CRD schema is
 * the same, and valibot checks the bounds when it validates.
 *
 * ## Example
 * ```ts
 * import * as v from 'valibot';
 * import { toStandardJsonSchema } from '@valibot/to-json-schema';
 * import { customResource } from 'rxkube';
 * import { conditions } from 'rxkube/valibot';
 *
 * const Website = customResource({
 *   group: 'example.com', version: 'v1', kind: 'Website',
 *   spec: toStandardJsonSchema(v.object({ image: v.string() })),
 *   status: toStandardJsonSchema(v.object({ conditions: v.optional(conditions()) })),
 * });
 * ```
 *
 * @returns A valibot array schema.
 */
export function conditions() {
  return v.pipe(
    v.array(
      v.object({
        // RegExp's source writes '/' as '\/': the pattern is given as apimachinery writes it.
        type: v.pipe(v.string(), v.maxLength(CONDITION_TYPE_MAX), v.regex(new RegExp(CONDITION_TYPE_PATTERN)), v.metadata({ pattern: CONDITION_TYPE_PATTERN })),
        status: v.picklist(CONDITION_STATUSES),
        observedGeneration: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
        lastTransitionTime: v.pipe(v.string(), v.isoTimestamp()),
        reason: v.pipe(v.string(), v.minLength(1), v.maxLength(CONDITION_REASON_MAX), v.regex(new RegExp(CONDITION_REASON_PATTERN))),
        message: v.pipe(v.string(), v.maxLength(CONDITION_MESSAGE_MAX)),
      }),
    ),
    v.metadata({ ...CONDITION_LIST, 'x-kubernetes-list-map-keys': ['type'] }),
  );
}
