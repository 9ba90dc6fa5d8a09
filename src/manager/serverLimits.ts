import { checkOptionNames, describeValue, numberOption, optionNames } from '../options/validate.js';
import { MAX_TIMER_MS } from '../options/timerDelay.js';

/**
 * Bounds on what a client of the runner's probe, metrics and webhook servers
 * can hold: connections, header and body bytes, and how long each part of a
 * request may take.
 * Anyone who reaches the pod IP reaches these ports, so each bound is set; the
 * defaults leave the kubelet (a new connection per probe, answered in
 * milliseconds) and Prometheus (one keep-alive connection per scrape) far
 * inside them.
 *
 * ## Example
 * ```ts
 * import { manager, type Controller } from 'rxkube';
 * import type { ManagerServerLimits } from 'rxkube/core';
 * declare const c: Controller<unknown>;
 *
 * const serverLimits: ManagerServerLimits = { maxConnections: 32, headersTimeoutMs: 5_000 };
 * manager({ controllers: [c], serverLimits }).subscribe();
 * ```
 */
export interface ManagerServerLimits {
  /**
   * Open connections per server. One more pushes out the oldest connection
   * with no answer in flight, so a probe is answered however many idle
   * connections were opened before it. Two servers at the default hold at
   * most 128 descriptors, well under the 1024 of a default soft file limit.
   * @default 64
   */
  readonly maxConnections?: number;
  /**
   * Time to receive a request's headers (slow senders are answered 408 and closed), and on the webhook server the
   * body as well, counted from its headers. Go's controller-runtime allows 32 s; a probe sends its headers at once,
   * the API server its body. @default 10_000
   */
  readonly headersTimeoutMs?: number;
  /** Time to receive a whole request, body included. At least `headersTimeoutMs`. @default 30_000 */
  readonly requestTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept after an answer (Node's own default). @default 5_000 */
  readonly keepAliveTimeoutMs?: number;
  /** How long a connection may see no bytes either way at any point before it is closed. @default 30_000 */
  readonly idleTimeoutMs?: number;
  /** Bytes of request line and headers; more is answered 431 and closed (Node's own default). @default 16_384 */
  readonly maxHeaderBytes?: number;
  /**
   * How long a route may take to answer before the client gets a 503 instead; Prometheus gives up on a scrape after 10 s
   * by default. An admission webhook whose `timeoutSeconds` is longer is waited for that long instead. @default 10_000
   */
  readonly answerTimeoutMs?: number;
  /**
   * Bytes of a request body the webhook server reads (the probe and metrics servers read none). A longer body is
   * answered 413 and the connection closed without reading the rest. controller-runtime reads at most 7 MiB too:
   * etcd stores objects up to 1.5 MiB, and an AdmissionReview carries the object and the old one, JSON-escaped.
   * @default 7_340_032
   */
  readonly maxBodyBytes?: number;
  /**
   * Bytes of request bodies the webhook server holds at once, over all its connections, from their first byte
   * until their answer is written. A request whose next bytes do not fit is answered 503 with `Connection: close`
   * and not read further. kubebuilder's scaffold gives the manager 128 MiB of memory, and a parsed body costs a few
   * times its text: 32 MiB holds four bodies at `maxBodyBytes`' default at once, and thousands of the few-KiB
   * reviews an API server usually sends. At least `maxBodyBytes`; when not given, never less than it.
   * @default 33_554_432
   */
  readonly maxBufferedBodyBytes?: number;
}

/** The limits once checked, each set. */
export type ServerLimits = Required<ManagerServerLimits>;

/** The defaults, with why on each field of {@link ManagerServerLimits}. */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxConnections: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
  maxHeaderBytes: 16_384,
  answerTimeoutMs: 10_000,
  maxBodyBytes: 7 * 1024 * 1024,
  maxBufferedBodyBytes: 32 * 1024 * 1024,
};

/** Byte counts, to which the 2³¹−1 bound of the timeouts does not apply. */
const BYTE_COUNTS: ReadonlySet<string> = new Set(['maxBodyBytes', 'maxBufferedBodyBytes']);

const NAMES = optionNames<ManagerServerLimits>({
  maxConnections: true,
  headersTimeoutMs: true,
  requestTimeoutMs: true,
  keepAliveTimeoutMs: true,
  idleTimeoutMs: true,
  maxHeaderBytes: true,
  answerTimeoutMs: true,
  maxBodyBytes: true,
  maxBufferedBodyBytes: true,
});

/** Checks `serverLimits` up front: each a positive integer within what Node accepts, headers within the request. */
export function resolveServerLimits(value: unknown): ServerLimits {
  if (value === undefined) return DEFAULT_SERVER_LIMITS;
  const o = checkOptionNames('manager: serverLimits', value, NAMES);
  const resolved = {} as Record<keyof ServerLimits, number>;
  for (const name of NAMES as (keyof ServerLimits)[]) {
    const n = numberOption('manager', `serverLimits.${name}`, o[name], DEFAULT_SERVER_LIMITS[name], { min: 1, integer: true });
    if (!BYTE_COUNTS.has(name) && n > MAX_TIMER_MS) throw new TypeError(`manager: option "serverLimits.${name}" must be at most ${MAX_TIMER_MS}, got ${describeValue(n)}`);
    resolved[name] = n;
  }
  if (resolved.headersTimeoutMs > resolved.requestTimeoutMs) {
    throw new TypeError(`manager: option "serverLimits.headersTimeoutMs" (${resolved.headersTimeoutMs}) must not exceed "serverLimits.requestTimeoutMs" (${resolved.requestTimeoutMs})`);
  }
  if (o['maxBufferedBodyBytes'] === undefined) {
    resolved.maxBufferedBodyBytes = Math.max(resolved.maxBufferedBodyBytes, resolved.maxBodyBytes);
  } else if (resolved.maxBufferedBodyBytes < resolved.maxBodyBytes) {
    throw new TypeError(
      `manager: option "serverLimits.maxBufferedBodyBytes" (${resolved.maxBufferedBodyBytes}) must not be less than "serverLimits.maxBodyBytes" (${resolved.maxBodyBytes}): a body that may be read must fit`,
    );
  }
  return resolved;
}
