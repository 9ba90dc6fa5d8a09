// The bounds apimachinery puts on metav1.Condition, in one place for the JSON Schema, zod and valibot forms.

/** `(dns1123 subdomain/)?qualified name`: `Ready`, `example.com/Degraded`. */
export const CONDITION_TYPE_PATTERN = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$';
export const CONDITION_TYPE_MAX = 316;
/** CamelCase with `_`, `,` and `:` inside: `MinimumReplicasAvailable`. */
export const CONDITION_REASON_PATTERN = '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$';
export const CONDITION_REASON_MAX = 1024;
export const CONDITION_MESSAGE_MAX = 32768;
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
/** The list is a map keyed by `type`, so server-side apply merges conditions one by one. */
export const CONDITION_LIST = { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] } as const;

/**
 * One `metav1.Condition`, as it is on the wire (`lastTransitionTime` an RFC
 * 3339 string, not a `Date`): the latest observation of one aspect of an
 * object's state, one per `type`.
 */
export interface Condition {
  /** `Ready`, `Available`, `example.com/Degraded`: CamelCase, at most 316 characters. */
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  /** The `metadata.generation` the condition was set for. */
  readonly observedGeneration?: number;
  /** When `status` last changed: RFC 3339 (`2026-01-02T03:04:05Z`). */
  readonly lastTransitionTime: string;
  /** Why, in CamelCase, for machines: `MinimumReplicasAvailable`. */
  readonly reason: string;
  /** Why, for people; may be empty. */
  readonly message: string;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

/** Whether a string is an RFC 3339 date-time that also parses as a date. */
export function isRfc3339(value: string): boolean {
  return RFC3339.test(value) && !Number.isNaN(Date.parse(value));
}
