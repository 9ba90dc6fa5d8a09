// The bounds on what one list or watch response may make rxkube hold or
// wait for (docs/semantics.md HI-23 to HI-27): their defaults, and the
// checks of kubeSource's options that set them. Internal.

import { MAX_TIMER_MS } from '../options/timerDelay.js';
import { describeValue } from '../options/validate.js';

/** A mebibyte, the unit the bounds are stated in. */
export const MiB = 1024 * 1024;

/**
 * One object as the API server stores it is at most 1.5 MiB (etcd's default
 * request limit) and is written by a client in at most 3 MiB of JSON
 * (kube-apiserver's request limit); served as JSON with its managedFields
 * it can grow, and escaped control characters take six bytes each. 16 MiB
 * is five times the largest write and ten times the largest stored object.
 */
export const DEFAULT_MAX_OBJECT_BYTES = 16 * MiB;

/**
 * The largest list body real clusters send is an unpaged list served from
 * the watch cache (a `resourceVersion=0` list ignores `limit` there): about
 * 1 GiB for 150,000 pods, the largest cluster Kubernetes supports. Twice that.
 */
export const DEFAULT_MAX_LIST_BYTES = 2048 * MiB;

/**
 * kube-apiserver ends a request that is not a watch after 60 s (its
 * `--request-timeout`); twice that, so its own 504 arrives first.
 */
export const DEFAULT_LIST_TIMEOUT_MS = 120_000;

/** Past the base, a list must come in at 1 MiB/s on average, a hundredth of a slow link. */
export const DEFAULT_LIST_TIMEOUT_PER_MIB_MS = 1_000;

/** An item is turned into one string before parsing: V8's longest is 2^29 - 24 characters; half of that leaves room. */
const LARGEST_OBJECT_BOUND = 256 * MiB;

/** The bounds of one source, every default filled in. */
export interface WireLimits {
  readonly maxObjectBytes: number;
  readonly maxListBytes: number;
  readonly listTimeoutMs: number;
  readonly listTimeoutPerMiBMs: number;
}

/** The options of kubeSource that set the bounds (see `KubeSourceOptions`). */
export interface WireLimitOptions {
  readonly maxObjectBytes?: number;
  readonly maxListBytes?: number;
  readonly listTimeoutMs?: number;
  readonly listTimeoutPerMiBMs?: number;
}

/**
 * Checks the bound options up front: a TypeError names the option and the value.
 *
 * @param opts kubeSource's options.
 * @returns Every bound, with the defaults for those not given.
 */
export function wireLimitsOf(opts: WireLimitOptions): WireLimits {
  const maxObjectBytes = integer(opts, 'maxObjectBytes', DEFAULT_MAX_OBJECT_BYTES, 1024, LARGEST_OBJECT_BOUND);
  return {
    maxObjectBytes,
    maxListBytes: integer(opts, 'maxListBytes', DEFAULT_MAX_LIST_BYTES, 1024, Number.MAX_SAFE_INTEGER),
    listTimeoutMs: integer(opts, 'listTimeoutMs', DEFAULT_LIST_TIMEOUT_MS, 1, MAX_TIMER_MS),
    listTimeoutPerMiBMs: integer(opts, 'listTimeoutPerMiBMs', DEFAULT_LIST_TIMEOUT_PER_MIB_MS, 0, MAX_TIMER_MS),
  };
}

function integer(opts: WireLimitOptions, key: keyof WireLimitOptions, fallback: number, min: number, max: number): number {
  const value = opts[key];
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new TypeError(`${key}: expected an integer from ${min} to ${max}, got ${describeValue(value)}`);
  }
  return value;
}
