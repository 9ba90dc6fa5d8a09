import { describeValue } from '../options/validate.js';
import {
  CONDITION_LIST,
  CONDITION_MESSAGE_MAX,
  CONDITION_REASON_MAX,
  CONDITION_REASON_PATTERN,
  CONDITION_STATUSES,
  CONDITION_TYPE_MAX,
  CONDITION_TYPE_PATTERN,
  isRfc3339,
  type Condition,
} from './conditionRules.js';
import type { TypedJsonSchema } from './jsonSchema.js';

/**
 * The JSON Schema of `metav1.Condition[]` with apimachinery's bounds — `type`
 * at most 316 characters of its pattern, `status` one of True, False and
 * Unknown, `observedGeneration` ≥ 0, `lastTransitionTime` a date-time,
 * `reason` 1 to 1024 characters of its pattern, `message` at most 32768 —
 * as a list map keyed by `type`, so server-side apply merges conditions one
 * by one. For a status written as plain JSON Schema; with zod or valibot use
 * `conditions()` from `rxkube/zod` or `rxkube/valibot`, which give the same
 * CRD schema.
 *
 * ## Example
 * ```ts
 * import { customResource, conditions, jsonSchema } from 'rxkube';
 *
 * const Website = customResource({
 *   group: 'example.com', version: 'v1', kind: 'Website',
 *   spec: jsonSchema<{ image: string }>({ type: 'object', properties: { image: { type: 'string' } }, required: ['image'] }),
 *   status: { type: 'object', properties: { conditions: conditions() } },
 * });
 * ```
 *
 * @returns A new JSON Schema value each call.
 */
export function conditions(): TypedJsonSchema<Condition[]> {
  return {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        type: { type: 'string', maxLength: CONDITION_TYPE_MAX, pattern: CONDITION_TYPE_PATTERN },
        status: { type: 'string', enum: [...CONDITION_STATUSES] },
        observedGeneration: { type: 'integer', minimum: 0 },
        lastTransitionTime: { type: 'string', format: 'date-time' },
        reason: { type: 'string', minLength: 1, maxLength: CONDITION_REASON_MAX, pattern: CONDITION_REASON_PATTERN },
        message: { type: 'string', maxLength: CONDITION_MESSAGE_MAX },
      },
      required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
    },
    ...CONDITION_LIST,
    'x-kubernetes-list-map-keys': ['type'],
  } as unknown as TypedJsonSchema<Condition[]>;
}

/** What setCondition takes: a condition whose `message` and `lastTransitionTime` may be left out. */
type ConditionUpdate = Parameters<typeof setCondition>[1];

const TYPE = new RegExp(CONDITION_TYPE_PATTERN);
const REASON = new RegExp(CONDITION_REASON_PATTERN);

/**
 * Sets one condition in a list by apimachinery's `meta.SetStatusCondition`
 * rules: a condition of a new `type` is added; an existing one takes the
 * new `status`, `reason`, `message` and `observedGeneration`, and its
 * `lastTransitionTime` changes only when its status does (to the update's
 * own time if it has one, otherwise `now`, in RFC 3339 to the second with
 * `Z`). The list is never changed: the answer is a new array, or the very
 * array given when nothing changed, so `next !== prev` says whether a status
 * write is needed. A condition the API server would refuse (a `type` or
 * `reason` off its pattern or too long, a status other than True, False and
 * Unknown) throws a TypeError naming the field.
 *
 * ## Example
 * ```ts
 * import { setCondition, type Condition } from 'rxkube';
 *
 * declare const current: readonly Condition[] | undefined;
 * const next = setCondition(current, { type: 'Ready', status: 'True', reason: 'Available', observedGeneration: 3 });
 * if (next !== current) console.log('write the status', next);
 * ```
 *
 * @param conditions The current list (`status.conditions`), or undefined.
 * @param update The condition to set; its `message` may be left out (`''`), and its `lastTransitionTime`,
 *   used only when the condition is new or its status changes (`now`, to the second).
 * @param now The time of a transition without its own.
 * @returns The list with the condition set: a new array, or the one given when nothing changed (treat it as read-only).
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: Omit<Condition, 'message' | 'lastTransitionTime'> & { readonly message?: string; readonly lastTransitionTime?: string },
  now: Date = new Date(),
): Condition[] {
  checkUpdate(update, now);
  const list = conditions ?? [];
  const index = list.findIndex((c) => c.type === update.type);
  const at = update.lastTransitionTime ?? now.toISOString().replace(/\.\d+Z$/, 'Z');
  const message = update.message ?? '';
  const existing = list[index];
  if (existing === undefined) return [...list, withGeneration({ type: update.type, status: update.status, lastTransitionTime: at, reason: update.reason, message }, update.observedGeneration)];
  const transition = existing.status !== update.status;
  const unchanged = !transition && existing.reason === update.reason && existing.message === message && (existing.observedGeneration ?? 0) === (update.observedGeneration ?? 0);
  // Typed mutable so it fits a status schema's array type; it may be the (frozen) list given, never to be changed in place.
  if (unchanged) return conditions as Condition[];
  const next = withGeneration(
    { type: existing.type, status: update.status, lastTransitionTime: transition ? at : existing.lastTransitionTime, reason: update.reason, message },
    update.observedGeneration,
  );
  return list.map((c, i) => (i === index ? next : c));
}

function withGeneration(c: Condition, generation: number | undefined): Condition {
  return generation === undefined ? c : { ...c, observedGeneration: generation };
}

function checkUpdate(update: ConditionUpdate, now: Date): void {
  if (typeof update !== 'object' || update === null) throw new TypeError(`setCondition: condition must be an object, got ${describeValue(update)}`);
  const { type, status, reason, message, observedGeneration, lastTransitionTime } = update;
  if (typeof type !== 'string' || type.length > CONDITION_TYPE_MAX || !TYPE.test(type)) throw new TypeError(`setCondition: type must be CamelCase or domain/CamelCase, at most ${CONDITION_TYPE_MAX} characters ('Ready'), got ${describeValue(type)}`);
  if (!(CONDITION_STATUSES as readonly unknown[]).includes(status)) throw new TypeError(`setCondition: status must be "True", "False" or "Unknown", got ${describeValue(status)}`);
  if (typeof reason !== 'string' || reason.length > CONDITION_REASON_MAX || !REASON.test(reason)) throw new TypeError(`setCondition: reason must be CamelCase ('MinimumReplicasAvailable'), 1 to ${CONDITION_REASON_MAX} characters, got ${describeValue(reason)}`);
  if (message !== undefined && (typeof message !== 'string' || message.length > CONDITION_MESSAGE_MAX)) throw new TypeError(`setCondition: message must be a string of at most ${CONDITION_MESSAGE_MAX} characters, got ${describeValue(message)}`);
  if (observedGeneration !== undefined && (!Number.isSafeInteger(observedGeneration) || observedGeneration < 0)) throw new TypeError(`setCondition: observedGeneration must be a non-negative integer, got ${describeValue(observedGeneration)}`);
  if (lastTransitionTime !== undefined && (typeof lastTransitionTime !== 'string' || !isRfc3339(lastTransitionTime))) throw new TypeError(`setCondition: lastTransitionTime must be an RFC 3339 date-time string, got ${describeValue(lastTransitionTime)}`);
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError(`setCondition: now must be a valid Date, got ${describeValue(now)}`);
}
