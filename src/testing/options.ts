import type { Fault, FaultTarget } from './faults/faults.js';
import type { ResourceDefinition } from './storage/resources.js';
import type { WatchDelay, WatchDelayOptions } from './watch/watchDelay.js';
import { crdRefusal } from './crd/crdResource.js';
import { usersByToken, type AccessAttributes, type AccessDecision, type SimulatedUser } from './auth/users.js';
import { printable } from '../errors/printable.js';
import { booleanOption, describeValue, functionOption, numberOption } from '../options/validate.js';

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  /**
   * TCP port on 127.0.0.1; 0 picks a free one, below the range the OS gives outgoing connections where that range is
   * known (Linux), so that no connection can take the port while a {@link ApiServer.restart} has the server down.
   * @default 0
   */
  readonly port?: number;
  /** Serve HTTPS with a freshly generated CA and serving certificate. @default false */
  readonly tls?: boolean;
  /**
   * With `tls`: offer HTTP/2 in the TLS handshake (ALPN), HTTP/1.1 staying
   * available, as kube-apiserver does; clients that accept multiplex their
   * requests over one connection.
   * @default false
   */
  readonly http2?: boolean;
  /**
   * When set, every request must carry `Authorization: Bearer <token>`, else
   * 401. More tokens can be accepted, and any revoked, while the server runs
   * (`acceptToken`, `revokeToken`).
   * @default undefined (no authentication)
   */
  readonly token?: string;
  /**
   * More users, each known by its bearer token (needs `token`, the admin's):
   * their requests authenticate as them (the userInfo webhooks are sent), and
   * `authentication.k8s.io/v1` TokenReviews of their tokens answer with them.
   * The admin is `system:admin` in `system:masters`.
   * @default []
   */
  readonly users?: readonly SimulatedUser[];
  /**
   * Decides `authorization.k8s.io/v1` SubjectAccessReviews: given the
   * review's spec, returns whether the access is allowed (or
   * `{ allowed, denied?, reason? }`). What it throws becomes the review's
   * `evaluationError`. Requests to the simulator itself are not authorized
   * by it: every authenticated request is served.
   * @default members of `system:masters` are allowed, nobody else has an opinion given
   */
  readonly authorize?: (attributes: AccessAttributes) => AccessDecision;
  /**
   * Gzip a response larger than 128 KiB when the request's `Accept-Encoding`
   * lists gzip, as kube-apiserver does with its `APIResponseCompression`
   * feature (on by default): lists of more than a few dozen objects, at
   * level 1. Watches are never compressed, by either.
   * @default true
   */
  readonly compression?: boolean;
  /** The event log window: watches and continue tokens older than it get 410. @default { maxEvents: 10_000, maxAgeMs: undefined } */
  readonly history?: { readonly maxEvents?: number; readonly maxAgeMs?: number };
  /** Period of BOOKMARK events to watchers that asked for them. @default 60_000 */
  readonly bookmarkIntervalMs?: number;
  /** Resources to serve besides the built-in ones. @default [] */
  readonly resources?: readonly ResourceDefinition[];
  /**
   * CustomResourceDefinitions (`apiextensions.k8s.io/v1` objects, as
   * `kubectl apply` would send them) installed at start as if created:
   * Established, served, their objects admitted by their schemas. Each is
   * checked up front; one the server would refuse is a TypeError.
   * @default []
   */
  readonly crds?: readonly object[];
  /**
   * Serve watch-list (`sendInitialEvents`) as a server with the WatchList
   * feature does; `false` refuses it with 422 Invalid, as servers before 1.32
   * or with `--feature-gates=WatchList=false` do. @default true
   */
  readonly watchList?: boolean;
  /**
   * Called for every request on one object (get, create, update, patch,
   * delete) once it has been answered, in the same turn, so `server.get()`
   * inside sees the state the answer was made from: kube-apiserver's audit
   * log, reduced to what tests and benchmarks ask of it. What it throws is
   * ignored.
   * @default undefined
   */
  readonly audit?: (event: AuditEvent) => void;
}

/**
 * One answered request on one object, as {@link ApiServerOptions.audit} sees it.
 *
 * ## Example
 * ```ts
 * import { startApiServer, type AuditEvent } from 'rxkube/testing';
 *
 * const conflicts: AuditEvent[] = [];
 * const server = await startApiServer({ audit: (e) => e.code === 409 && conflicts.push(e) });
 * ```
 */
export interface AuditEvent {
  readonly verb: 'get' | 'create' | 'update' | 'patch' | 'delete';
  /** `v1/pods`, `apps/v1/deployments`… */
  readonly resource: string;
  /** The namespace of the path, if any. */
  readonly namespace: string | undefined;
  /** The object's name: from the path, or from the created object. */
  readonly name: string | undefined;
  /** The HTTP status code answered. */
  readonly code: number;
  /** The Status reason of an error answer (`Conflict`, `AlreadyExists`, `NotFound`…). */
  readonly reason: string | undefined;
  /** The resourceVersion of the object answered, for a successful request. */
  readonly resourceVersion: string | undefined;
}

/**
 * Options of {@link ApiServer.restart}: how long the simulated
 * kube-apiserver stays down before it listens again.
 *
 * ## Example
 * ```ts
 * import { startApiServer, type RestartOptions } from 'rxkube/testing';
 *
 * const server = await startApiServer();
 * const options: RestartOptions = { downMs: 500 };
 * await server.restart(options);
 * ```
 */
export interface RestartOptions {
  /** How long the server stays down (connections refused) before it listens again. @default 0 */
  readonly downMs?: number;
}

/** Scriptable faults: see {@link Fault} for what can be injected. */
export interface ApiServerFaults {
  /** Ends every open watch response cleanly now. */
  closeWatches(): void;
  /** Destroys every open socket, mid-line if data is in flight. */
  resetConnections(): void;
  /** Arms a fault for the next matching requests (or watch lines, for stream faults). */
  inject(fault: Fault, target?: FaultTarget): void;
  /**
   * Holds back the lines of open and future watches (of `resource`, or of
   * all): each for `delayMs`, or until `release()` when that is `Infinity`
   * (the default), as a watch cache lagging behind etcd would. Writes are
   * answered at once; bookmarks are held like events; order is kept.
   */
  delayWatches(opts?: WatchDelayOptions): WatchDelay;
  /** Disarms every pending fault and releases every watch delay. */
  clear(): void;
  /** How many injected faults are still armed (each counted once however many firings it has left). */
  pending(): number;
}

/** Checks every option up front, throwing a TypeError that names the option and the value. */
export function validateOptions(opts: ApiServerOptions): void {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`startApiServer: options must be an object, got ${describeValue(opts)}`);
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`startApiServer: port must be an integer in 0..65535, got ${describeValue(opts.port)}`);
  booleanOption('startApiServer', 'tls', opts.tls, false);
  if (opts.token !== undefined && (typeof opts.token !== 'string' || opts.token === '' || /\s/.test(opts.token))) {
    throw new TypeError(`startApiServer: token must be a non-empty string without whitespace, got ${describeValue(opts.token)}`);
  }
  usersByToken(opts.users, opts.token);
  functionOption('startApiServer', 'authorize', opts.authorize);
  numberOption('startApiServer', 'history.maxEvents', opts.history?.maxEvents, 10_000, { min: 1, integer: true });
  const maxAge = opts.history?.maxAgeMs;
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !(maxAge > 0))) {
    throw new TypeError(`startApiServer: history.maxAgeMs must be a positive number, got ${describeValue(maxAge)}`);
  }
  const bookmark = opts.bookmarkIntervalMs ?? 60_000;
  if (typeof bookmark !== 'number' || !(bookmark > 0) || !Number.isFinite(bookmark)) {
    throw new TypeError(`startApiServer: bookmarkIntervalMs must be a positive number, got ${describeValue(opts.bookmarkIntervalMs)}`);
  }
  booleanOption('startApiServer', 'http2', opts.http2, false);
  if (opts.http2 === true && opts.tls !== true) throw new TypeError('startApiServer: http2 needs tls: true (HTTP/2 is offered in the TLS handshake)');
  booleanOption('startApiServer', 'compression', opts.compression, false);
  booleanOption('startApiServer', 'watchList', opts.watchList, false);
  functionOption('startApiServer', 'audit', opts.audit);
  if (opts.crds !== undefined) {
    if (!Array.isArray(opts.crds)) throw new TypeError(`startApiServer: crds must be an array of CustomResourceDefinition objects, got ${describeValue(opts.crds)}`);
    for (const [i, crd] of (opts.crds as unknown[]).entries()) {
      const refusal = crdRefusal(crd);
      if (refusal !== undefined) throw new TypeError(`startApiServer: crds[${i}] would be refused: ${printable(refusal.slice(0, 1000))}`);
    }
  }
  if (opts.resources !== undefined && !Array.isArray(opts.resources)) {
    throw new TypeError(`startApiServer: resources must be an array, got ${describeValue(opts.resources)}`);
  }
}

/** Checks the options of a restart. */
export function validateRestartOptions(opts: RestartOptions | undefined): number {
  if (opts === undefined) return 0;
  if (opts === null || typeof opts !== 'object') throw new TypeError(`restart: options must be an object, got ${describeValue(opts)}`);
  return numberOption('restart', 'downMs', opts.downMs ?? undefined, 0);
}
