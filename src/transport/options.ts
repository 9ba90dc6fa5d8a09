import type { KubeConfig } from '@kubernetes/client-node';
import { MAX_TIMER_MS } from '../options/timerDelay.js';
import { describeValue } from '../options/validate.js';

/**
 * How rxkube talks to a cluster: the protocol, compression and HTTP/2's
 * liveness check. Attached to a KubeConfig with {@link withTransport}, so
 * every source, client and lock built from that KubeConfig uses them.
 *
 * ## Example
 * ```ts
 * import { withTransport } from 'rxkube';
 * import { type TransportOptions } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const options: TransportOptions = { http2: false, compression: true };
 * const kc2 = withTransport(kc, options);
 * ```
 */
export interface TransportOptions {
  /**
   * The longest one request waits for its credentials: an exec plugin's
   * answer, an OIDC refresh, a provider of client-node's. Past it the request
   * fails with a `ConnectionError` of code `CREDENTIALS` (an informer reports
   * it and retries with backoff) and an exec plugin nobody else waits for is
   * killed. A request's own deadline (an object client's `timeoutMs`, a
   * list's or watch's idle timeout) and its signal end the wait sooner.
   * `aws eks get-token` and `gke-gcloud-auth-plugin` answer in a second or
   * two; the default leaves room for a slow start and a slow identity
   * provider without leaving an informer silent for long.
   * @default 30_000
   */
  readonly credentialTimeoutMs?: number;
  /**
   * Offer HTTP/2 during the TLS handshake (ALPN). Where the server accepts
   * (kube-apiserver does), every list, watch and write of the pool shares one
   * connection; otherwise, and over plain `http:`, HTTP/1.1 with kept-alive
   * connections is used, one per request in flight. Measured against a real
   * kube-apiserver with 20 informers (`npm run bench -- transport`), HTTP/2
   * opened 1 connection where HTTP/1.1 opened 21, held 1–5 % less memory,
   * and delivered watch events about as fast; each write beside the watches
   * took longer over loopback (median 1.18×, p99 1.13× on a quiet machine;
   * under heavy load its p99 was the lower one). It is the default for the
   * one connection per cluster, as in client-go: every watch over HTTP/1.1
   * holds a connection, and a TLS handshake, of its own at both ends.
   * `false` suits a proxy or load balancer that handles HTTP/1.1 better, or
   * a process that writes much and watches little.
   * @default true
   */
  readonly http2?: boolean;
  /**
   * Ask for gzip (`Accept-Encoding: gzip`) and inflate answers as they
   * stream in. kube-apiserver compresses responses larger than 128 KiB (a
   * LIST of a few dozen pods and more), never watches.
   * @default true
   */
  readonly compression?: boolean;
  /**
   * HTTP/2 only: once nothing has been read from a connection for this
   * long, a PING is sent (client-go's `ReadIdleTimeout`, 30 s).
   * @default 30_000
   */
  readonly readIdleTimeoutMs?: number;
  /**
   * HTTP/2 only: a PING unanswered for this long closes the connection, and
   * every request on it fails with a `ConnectionError` (client-go's
   * `PingTimeout`, 15 s); watches resume from their last resourceVersion.
   * @default 15_000
   */
  readonly pingTimeoutMs?: number;
  /**
   * A compressed answer (list, watch, read, error) may inflate to at most
   * this many times the compressed bytes read so far, once past its first
   * MiB; beyond, the body is dropped and the request fails with a
   * `DecodeError` of code `INFLATION_RATIO`, which an informer retries with
   * backoff. kube-apiserver compresses JSON with gzip at its fastest level:
   * lists of real objects inflate 5 to 20 times, lists of near-identical
   * objects a few dozen times; a gzip bomb inflates about 1,000 times, so
   * it is stopped after about a MiB instead of filling memory (a 2 MB bomb
   * is 2 GiB). client-go has no such bound.
   * @default 100
   */
  readonly maxInflationRatio?: number;
}

/** Transport options with every default filled in (internal). */
export type ResolvedTransportOptions = Required<TransportOptions>;

/** The defaults, used by KubeConfigs that went through no {@link withTransport}. */
export const DEFAULT_TRANSPORT: ResolvedTransportOptions = Object.freeze({
  credentialTimeoutMs: 30_000,
  http2: true,
  compression: true,
  readIdleTimeoutMs: 30_000,
  pingTimeoutMs: 15_000,
  maxInflationRatio: 100,
});

/** Where a KubeConfig view carries its options; a symbol, so it cannot clash with client-node's fields. */
const TRANSPORT = Symbol('rxkube.transport');

/**
 * A view of `kc` whose requests use `options`: every `kubeSource`,
 * `objectClient`, lease lock or informer built from the view sends its lists,
 * watches and writes that way. The view reads everything else (clusters,
 * users, contexts, credentials) from `kc`, so later changes to `kc` show
 * through; options given to an earlier `withTransport` are kept unless
 * overridden.
 *
 * Requests made with different options never share a connection: the
 * protocol is part of what identifies a connection pool.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { informer, kubeSource, withTransport } from 'rxkube';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * // HTTP/1.1 with kept-alive connections, no compression (a fast local link).
 * const plain = withTransport(kc, { http2: false, compression: false });
 * informer(kubeSource(plain, 'v1/pods')).subscribe();
 * ```
 *
 * @param kc The KubeConfig to read clusters, users and credentials from.
 * @param options What to change; the rest keeps its current value (see {@link TransportOptions} for the defaults).
 * @returns A KubeConfig to pass wherever rxkube takes one.
 */
export function withTransport(kc: KubeConfig, options: TransportOptions): KubeConfig {
  if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') throw new TypeError(`kc: expected a KubeConfig, got ${describeValue(kc)}`);
  const resolved = { ...transportOf(kc), ...checkTransportOptions(options) };
  const view = Object.create(kc) as KubeConfig & { [TRANSPORT]?: ResolvedTransportOptions };
  Object.defineProperty(view, TRANSPORT, { value: Object.freeze(resolved), enumerable: false });
  return view;
}

/**
 * The transport options a KubeConfig carries (internal): those of the
 * nearest {@link withTransport} view, else the defaults. Views made with
 * `Object.create` (as `plainHttpAllowed` does) keep them.
 */
export function transportOf(kc: KubeConfig): ResolvedTransportOptions {
  return (kc as { [TRANSPORT]?: ResolvedTransportOptions })[TRANSPORT] ?? DEFAULT_TRANSPORT;
}

/** Checks options up front: a TypeError names the option and the value. */
function checkTransportOptions(options: TransportOptions): TransportOptions {
  if (options === null || typeof options !== 'object') throw new TypeError(`options: expected an object, got ${describeValue(options)}`);
  const out: { -readonly [K in keyof TransportOptions]: TransportOptions[K] } = {};
  const credentialTimeoutMs = options.credentialTimeoutMs;
  if (credentialTimeoutMs !== undefined) {
    if (!Number.isSafeInteger(credentialTimeoutMs) || credentialTimeoutMs <= 0 || credentialTimeoutMs > MAX_TIMER_MS) {
      throw new TypeError(`credentialTimeoutMs: expected a positive integer of at most ${MAX_TIMER_MS}, got ${describeValue(credentialTimeoutMs)}`);
    }
    out.credentialTimeoutMs = credentialTimeoutMs;
  }
  for (const key of ['http2', 'compression'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new TypeError(`${key}: expected a boolean, got ${describeValue(value)}`);
    out[key] = value;
  }
  for (const key of ['readIdleTimeoutMs', 'pingTimeoutMs'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    // A Node timer longer than 2^31 - 1 ms fires after 1 ms: the check would PING without pause.
    if (!Number.isSafeInteger(value) || value <= 0 || value > MAX_TIMER_MS) throw new TypeError(`${key}: expected a positive integer up to ${MAX_TIMER_MS}, got ${describeValue(value)}`);
    out[key] = value;
  }
  const ratio = options.maxInflationRatio;
  if (ratio !== undefined) {
    if (typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio < 1) throw new TypeError(`maxInflationRatio: expected a finite number >= 1, got ${describeValue(ratio)}`);
    out.maxInflationRatio = ratio;
  }
  return out;
}
