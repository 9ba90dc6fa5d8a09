import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { parseFieldSelector, type FieldSelector } from '../store/fieldSelector.js';
import { parseLabelSelector, type LabelSelector } from '../store/labelSelector.js';
import { Churn, type ChurnOptions } from './churn.js';
import { decodeContinue, encodeContinue } from './continueToken.js';
import { FaultBoard, isStreamFault, validateFault, type Fault, type FaultTarget, type FaultVerb } from './faults.js';
import type { HistoryEvent, StoredObject } from './history.js';
import { kubeConfigYaml } from './kubeconfig.js';
import { jsonPatch, mergePatch } from './patch.js';
import { builtInResources, toResourceType, type ResourceDefinition, type ResourceType } from './resources.js';
import { DirectSink, resetSocket, TrickleSink, type Sink } from './sink.js';
import { badRequest, conflict, invalid, invalidFields, notFound, StatusError, tooLargeResourceVersion, type FieldCause, type Status } from './status.js';
import { keyRange, lowerBound, Storage, type Preconditions } from './storage.js';
import { generateServingCertificate, type ServingCertificate } from './tls.js';
import { injectedError, passes, WatchHub, Watcher, type ObjectFilter } from './watch.js';

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Serve HTTPS with a freshly generated CA and serving certificate. @default false */
  readonly tls?: boolean;
  /** When set, every request must carry `Authorization: Bearer <token>`, else 401. @default undefined */
  readonly token?: string;
  /** The event log window: watches and continue tokens older than it get 410. @default { maxEvents: 10_000, maxAgeMs: undefined } */
  readonly history?: { readonly maxEvents?: number; readonly maxAgeMs?: number };
  /** Period of BOOKMARK events to watchers that asked for them. @default 60_000 */
  readonly bookmarkIntervalMs?: number;
  /** Resources to serve besides the built-in ones. @default [] */
  readonly resources?: readonly ResourceDefinition[];
  /**
   * Serve watch-list (`sendInitialEvents`) as a server with the WatchList
   * feature does; `false` refuses it with 422 Invalid, as servers before 1.32
   * or with `--feature-gates=WatchList=false` do. @default true
   */
  readonly watchList?: boolean;
}

/** Counters for tests and benchmarks. */
export interface ApiServerStats {
  /** HTTP requests received. */
  readonly requests: number;
  /** Watch responses open now. */
  readonly watchesOpen: number;
  /** Watch responses started since the server began. */
  readonly watchesStarted: number;
  /** Watch lines (events, bookmarks, errors) queued to clients. */
  readonly eventsSent: number;
  /** Objects stored across every resource. */
  readonly objects: number;
  /** Events in the retained history window. */
  readonly historyEvents: number;
  /** Open TCP connections. */
  readonly connections: number;
  /** The current global resourceVersion. */
  readonly resourceVersion: string;
}

/** Scriptable faults: see {@link Fault} for what can be injected. */
export interface ApiServerFaults {
  /** Ends every open watch response cleanly now. */
  closeWatches(): void;
  /** Destroys every open socket, mid-line if data is in flight. */
  resetConnections(): void;
  /** Arms a fault for the next matching requests (or watch lines, for stream faults). */
  inject(fault: Fault, target?: FaultTarget): void;
  /** Disarms every pending fault. */
  clear(): void;
}

/** A resource as tests name it: `'v1/pods'`, `'apps/v1/deployments'`, or the parts. */
export type ResourceName = string | { readonly group?: string; readonly version: string; readonly plural: string };

type AnyObject = Record<string, unknown>;

/** The parts of a request path that name what is being acted on. */
interface Target {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

const MAX_BODY = 16 * 1024 * 1024;
const NOT_FOUND_MESSAGE = 'the server could not find the requested resource';
// The resource whose deletion goes through the emulated namespace lifecycle.
const NAMESPACES = 'v1/namespaces';

function isRecord(v: unknown): v is AnyObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function validateOptions(opts: ApiServerOptions): void {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`startApiServer: options must be an object, got ${String(opts)}`);
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`startApiServer: port must be an integer in 0..65535, got ${String(opts.port)}`);
  if (opts.tls !== undefined && typeof opts.tls !== 'boolean') throw new TypeError(`startApiServer: tls must be a boolean, got ${String(opts.tls)}`);
  if (opts.token !== undefined && (typeof opts.token !== 'string' || opts.token === '' || /\s/.test(opts.token))) {
    throw new TypeError(`startApiServer: token must be a non-empty string without whitespace, got ${JSON.stringify(opts.token)}`);
  }
  const maxEvents = opts.history?.maxEvents ?? 10_000;
  if (!Number.isInteger(maxEvents) || maxEvents < 1) {
    throw new TypeError(`startApiServer: history.maxEvents must be a positive integer, got ${String(opts.history?.maxEvents)}`);
  }
  const maxAge = opts.history?.maxAgeMs;
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !(maxAge > 0))) {
    throw new TypeError(`startApiServer: history.maxAgeMs must be a positive number, got ${String(maxAge)}`);
  }
  const bookmark = opts.bookmarkIntervalMs ?? 60_000;
  if (typeof bookmark !== 'number' || !(bookmark > 0) || !Number.isFinite(bookmark)) {
    throw new TypeError(`startApiServer: bookmarkIntervalMs must be a positive number, got ${String(opts.bookmarkIntervalMs)}`);
  }
  if (opts.watchList !== undefined && typeof opts.watchList !== 'boolean') {
    throw new TypeError(`startApiServer: watchList must be a boolean, got ${String(opts.watchList)}`);
  }
  if (opts.resources !== undefined && !Array.isArray(opts.resources)) {
    throw new TypeError(`startApiServer: resources must be an array, got ${String(opts.resources)}`);
  }
}

/**
 * Starts an in-process Kubernetes API server on 127.0.0.1 that speaks the
 * real list/watch protocol over HTTP (or HTTPS), for tests, demos and
 * benchmarks that have no cluster.
 *
 * It keeps objects in memory with etcd-like MVCC (one global, increasing
 * resourceVersion and an event log), serves the REST verbs with
 * kube-apiserver's Status errors, paged and consistent lists, watches with
 * bookmarks and selectors, and scriptable faults. See the README beside this
 * file for how it differs from a real kube-apiserver.
 *
 * ## Example
 * ```ts
 * import { CoreV1Api } from '@kubernetes/client-node';
 * import { startApiServer } from 'rxkube/testing';
 *
 * const server = await startApiServer();
 * await server.create('v1/pods', { metadata: { name: 'web', namespace: 'default' } });
 * const core = server.kubeConfig().makeApiClient(CoreV1Api);
 * const pods = await core.listNamespacedPod({ namespace: 'default' });
 * await server.close();
 * ```
 *
 * @param options what to serve and how.
 * @returns the running server; call `close()` when done.
 */
export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  validateOptions(options);
  const cert = options.tls === true ? await generateServingCertificate() : undefined;
  const server = new ApiServer(options, cert);
  await server.restart();
  return server;
}

/**
 * A running simulator. Create it with {@link startApiServer}; see there for
 * an overview. Direct storage methods (`create`, `update`, `patch`,
 * `delete`, `get`, `list`) have the same semantics as the REST verbs and
 * throw {@link StatusError} as the server would answer.
 */
export class ApiServer {
  // Registered resources by id ('v1/pods') and by URL path ('/api/v1|pods').
  readonly #types = new Map<string, ResourceType>();
  readonly #byPath = new Map<string, ResourceType>();
  // Survives stop()/restart(): the point of a restart is that the data is still there.
  readonly #storage: Storage;
  // Shared by request handling and the watchers, which take stream faults line by line.
  readonly #faults = new FaultBoard();
  // Every open watch, fed synchronously by the storage on each write.
  readonly #hub = new WatchHub(this.#faults);
  // One server object for the whole life, so restart() can listen again on the same port.
  readonly #http: http.Server;
  // Kept so the kubeconfig can carry the CA.
  readonly #cert: ServingCertificate | undefined;
  // The one credential every request must carry, when set.
  readonly #token: string | undefined;
  readonly #bookmarkIntervalMs: number;
  // False acts like a server without the WatchList feature gate.
  readonly #watchList: boolean;
  // Namespaces the emulated namespace controller is emptying; a deletion inside one re-checks whether it can go.
  readonly #terminating = new Set<string>();
  // One pending controller pass per namespace, however many deletions asked for it.
  readonly #cleanupScheduled = new Set<string>();
  // Open sockets, so stop() and resetConnections() can drop them at once.
  readonly #sockets = new Set<Socket>();
  // Requests parked by the stall fault; they hold their sockets until the client gives up or the server stops.
  readonly #stalled = new Set<http.ServerResponse>();
  readonly #churns = new Set<Churn>();
  // 0 until the first listen picks a port; then fixed, so restart() comes back where clients expect it.
  #port: number;
  // Whether stop() has something to stop.
  #listening = false;
  // close() is final: restart() refuses after it.
  #closed = false;
  // For stats: tests use it to see that a request reached the server.
  #requests = 0;
  // Periodic bookmarks; only runs while listening.
  #bookmarkTimer: NodeJS.Timeout | undefined;

  /** Scriptable faults; see {@link ApiServerFaults}. */
  readonly faults: ApiServerFaults;

  /**
   * Use {@link startApiServer}; the constructor does not listen.
   * @param options validated server options.
   * @param cert the serving certificate when TLS is on.
   */
  constructor(options: ApiServerOptions, cert: ServingCertificate | undefined) {
    validateOptions(options);
    this.#port = options.port ?? 0;
    this.#cert = cert;
    this.#token = options.token;
    this.#bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
    this.#watchList = options.watchList ?? true;
    this.#storage = new Storage(options.history?.maxEvents ?? 10_000, options.history?.maxAgeMs, (e: HistoryEvent) => {
      this.#hub.dispatch(e);
      // Content with finalizers holds a terminating namespace; its final deletion lets the namespace go.
      if (e.type === 'DELETED' && e.resource.namespaced && this.#terminating.has(e.cur.namespace)) this.#scheduleNamespaceCleanup(e.cur.namespace);
    });
    for (const t of builtInResources()) this.#addType(t);
    for (const def of options.resources ?? []) this.registerResource(def);
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => this.#handle(req, res);
    this.#http = cert === undefined ? http.createServer(handler) : https.createServer({ key: cert.keyPem, cert: cert.certPem }, handler);
    this.#http.keepAliveTimeout = 30_000;
    // Watches are long requests; node's default 5-minute request timeout would cut them where kube-apiserver does not.
    this.#http.requestTimeout = 0;
    this.#http.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    const hub = this.#hub;
    const sockets = this.#sockets;
    this.faults = {
      closeWatches: () => hub.closeAll(false),
      resetConnections: () => {
        hub.flushAll();
        for (const s of [...sockets]) {
          if (typeof s.resetAndDestroy === 'function') s.resetAndDestroy();
          else s.destroy();
        }
      },
      inject: (fault, target) => this.#faults.add(validateFault(fault, target)),
      clear: () => this.#faults.clear(),
    };
  }

  /** `http://127.0.0.1:PORT` or `https://…` when TLS is on. */
  get url(): string {
    return `${this.#cert === undefined ? 'http' : 'https'}://127.0.0.1:${this.#port}`;
  }

  /** The port, fixed once the server first listened (restart reuses it). */
  get port(): number {
    return this.#port;
  }

  /** The CA certificate (PEM) clients must trust when TLS is on. */
  get caPem(): string | undefined {
    return this.#cert?.caPem;
  }

  /** Counters for tests and benchmarks. */
  get stats(): ApiServerStats {
    return {
      requests: this.#requests,
      watchesOpen: this.#hub.open,
      watchesStarted: this.#hub.counters.watchesStarted,
      eventsSent: this.#hub.counters.eventsSent,
      objects: this.#storage.objectCount,
      historyEvents: this.#storage.historySize,
      connections: this.#sockets.size,
      resourceVersion: String(this.#storage.resourceVersion),
    };
  }

  /**
   * A client-node KubeConfig pointing at this server, with the CA and token
   * when they are in use.
   *
   * ## Example
   * ```ts
   * import { CoreV1Api } from '@kubernetes/client-node';
   * const core = server.kubeConfig().makeApiClient(CoreV1Api);
   * ```
   *
   * @returns a fresh KubeConfig.
   */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromString(this.kubeConfigYaml());
    return kc;
  }

  /**
   * The kubeconfig of {@link ApiServer.kubeConfig} as YAML text, to write to
   * a file for kubectl or another process.
   *
   * ## Example
   * ```ts
   * import { writeFileSync } from 'node:fs';
   * writeFileSync('/tmp/kubeconfig', server.kubeConfigYaml());
   * ```
   *
   * @returns the YAML document.
   */
  kubeConfigYaml(): string {
    return kubeConfigYaml({ url: this.url, caPem: this.#cert?.caPem, token: this.#token });
  }

  /**
   * Serves a custom resource from now on (as if its CRD had been created).
   * Registering the same definition twice is harmless; a different one under
   * the same name throws.
   *
   * ## Example
   * ```ts
   * server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
   * await server.create('example.com/v1/widgets', { metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
   * ```
   *
   * @param def the resource's names and scope.
   * @returns the resource's id, e.g. `example.com/v1/widgets`.
   */
  registerResource(def: ResourceDefinition): string {
    const type = toResourceType(def);
    const existing = this.#types.get(type.id);
    if (existing !== undefined) {
      if (existing.kind !== type.kind || existing.namespaced !== type.namespaced) {
        throw new TypeError(`registerResource: ${type.id} is already registered as ${existing.kind} (namespaced: ${existing.namespaced})`);
      }
      return type.id;
    }
    this.#addType(type);
    return type.id;
  }

  #addType(type: ResourceType): void {
    this.#types.set(type.id, type);
    this.#byPath.set(`${type.group}|${type.version}|${type.plural}`, type);
    this.#storage.addResource(type);
  }

  #resolve(resource: ResourceName, method: string): ResourceType {
    const id =
      typeof resource === 'string'
        ? resource
        : resource !== null && typeof resource === 'object'
          ? [resource.group, resource.version, resource.plural].filter((p) => p !== undefined && p !== '').join('/')
          : undefined;
    const type = id === undefined ? undefined : this.#types.get(id);
    if (type === undefined) throw new TypeError(`${method}: unknown resource ${JSON.stringify(resource)}; register it with registerResource()`);
    return type;
  }

  /**
   * Creates an object as POST would: assigns uid, resourceVersion,
   * creationTimestamp and generation (and `generateName`).
   *
   * ## Example
   * ```ts
   * const pod = await server.create('v1/pods', { metadata: { name: 'a', namespace: 'default' }, spec: { nodeName: 'n1' } });
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param obj the object; it is copied, never kept.
   * @returns the stored object (a copy).
   * @throws StatusError 409 AlreadyExists, 422 Invalid, 400 BadRequest.
   */
  async create<T extends object>(resource: ResourceName, obj: T): Promise<T> {
    const type = this.#resolve(resource, 'create');
    return copyOut<T>(this.#storage.create(type, copyIn(obj, 'create'), undefined));
  }

  /**
   * Replaces an object as PUT would. A non-empty `metadata.resourceVersion`
   * must be the current one, else 409 Conflict.
   *
   * ## Example
   * ```ts
   * const pod = server.get('v1/pods', 'default', 'a')!;
   * await server.update('v1/pods', { ...pod, metadata: { ...pod.metadata, labels: { app: 'web' } } });
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param obj the new state; it is copied, never kept.
   * @returns the stored object (a copy).
   * @throws StatusError 409 Conflict, 404 NotFound.
   */
  async update<T extends object>(resource: ResourceName, obj: T): Promise<T> {
    const type = this.#resolve(resource, 'update');
    return copyOut<T>(this.#storage.update(type, copyIn(obj, 'update'), undefined));
  }

  /**
   * Applies a JSON merge patch (RFC 7386) as PATCH with
   * `application/merge-patch+json` would.
   *
   * ## Example
   * ```ts
   * await server.patch('v1/pods', 'default', 'a', { status: { phase: 'Running' } });
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace the namespace (`''` or undefined for cluster-scoped).
   * @param name the object's name.
   * @param patch the merge patch.
   * @returns the stored object (a copy).
   * @throws StatusError 404 NotFound, 409 Conflict when the patch carries a stale resourceVersion.
   */
  async patch<T extends object = AnyObject>(resource: ResourceName, namespace: string | undefined, name: string, patch: object): Promise<T> {
    const type = this.#resolve(resource, 'patch');
    const stored = this.#applyPatch(type, namespace ?? '', name, 'application/merge-patch+json', copyIn(patch, 'patch'), undefined);
    return copyOut<T>(stored);
  }

  /**
   * Deletes an object as DELETE would. An object with finalizers only gets
   * a deletionTimestamp and goes when they are removed. A namespace is
   * marked `Terminating` (deletionTimestamp set, a MODIFIED event); on the
   * next tick the emulated namespace controller deletes everything in it
   * and then the namespace.
   *
   * ## Example
   * ```ts
   * const gone = await server.delete('v1/pods', 'default', 'a');
   * gone.metadata.resourceVersion; // the deletion's resourceVersion
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace the namespace (`''` or undefined for cluster-scoped).
   * @param name the object's name.
   * @param preconditions optional uid / resourceVersion the object must have.
   * @returns the deleted object (a copy) stamped with the deletion's resourceVersion.
   * @throws StatusError 404 NotFound, 409 Conflict on a failed precondition.
   */
  async delete<T extends object = AnyObject>(resource: ResourceName, namespace: string | undefined, name: string, preconditions?: Preconditions): Promise<T> {
    const type = this.#resolve(resource, 'delete');
    return copyOut<T>(this.#delete(type, namespace ?? '', name, preconditions));
  }

  /**
   * Reads one object.
   *
   * ## Example
   * ```ts
   * const pod = server.get('v1/pods', 'default', 'a');
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace the namespace (`''` or undefined for cluster-scoped).
   * @param name the object's name.
   * @returns a copy of the object, or undefined.
   */
  get<T extends object = AnyObject>(resource: ResourceName, namespace: string | undefined, name: string): T | undefined {
    const type = this.#resolve(resource, 'get');
    const o = this.#storage.get(type, namespace ?? '', name);
    return o === undefined ? undefined : copyOut<T>(o);
  }

  /**
   * Lists the current objects of a resource, in key order.
   *
   * ## Example
   * ```ts
   * const names = server.list('v1/pods', 'default').map((p) => p.metadata.name);
   * ```
   *
   * @param resource e.g. `'v1/pods'`.
   * @param namespace only this namespace; @default every namespace
   * @returns copies of the objects.
   */
  list<T extends object = AnyObject>(resource: ResourceName, namespace?: string): T[] {
    const type = this.#resolve(resource, 'list');
    return this.#storage.list(type, namespace).map((o) => copyOut<T>(o));
  }

  /**
   * The current global resourceVersion.
   *
   * ## Example
   * ```ts
   * const before = Number(server.resourceVersion());
   * ```
   *
   * @returns the resourceVersion as a string of an increasing integer.
   */
  resourceVersion(): string {
    return String(this.#storage.resourceVersion);
  }

  /**
   * Drops the event history up to `rv` (default: everything). Watches from
   * an older resourceVersion get a 410 ERROR event; continue tokens and
   * Exact lists at or below it get 410 Expired. This is how a resource
   * without a watch cache behaves; a real resource with one keeps serving
   * that history from the cache after etcd compacts, so a test that needs a
   * 410 from the simulator should call this.
   *
   * ## Example
   * ```ts
   * server.compact(); // every continue token issued so far is now expired
   * ```
   *
   * @param rv the resourceVersion to compact to; @default the current one
   * @returns the resourceVersion compacted to.
   */
  compact(rv?: string | number): string {
    let target: number | undefined;
    if (rv !== undefined) {
      target = typeof rv === 'number' ? rv : Number(rv);
      if (!Number.isSafeInteger(target) || target < 1) throw new TypeError(`compact: rv must be a positive integer, got ${String(rv)}`);
    }
    return String(this.#storage.compact(target));
  }

  /**
   * Generates create / update / delete churn at a steady rate through the
   * storage, as a controller-heavy cluster would.
   *
   * ## Example
   * ```ts
   * const churn = server.churn({ resource: 'v1/pods', namespace: 'default', creates: 100, updates: 300, deletes: 50, perSecond: 500 });
   * await churn.done;
   * ```
   *
   * @param options what to write and how fast.
   * @returns a handle with `done` and `stop()`.
   */
  churn(options: ChurnOptions): Churn {
    const type = this.#resolve(options?.resource ?? 'v1/pods', 'churn');
    const churn = new Churn(this.#storage, type, options, () => this.#churns.delete(churn));
    this.#churns.add(churn);
    return churn;
  }

  /**
   * Stops listening and drops every connection while keeping the port and
   * the storage: clients see ECONNREFUSED until {@link ApiServer.restart}.
   *
   * ## Example
   * ```ts
   * server.stop();
   * await server.restart();
   * ```
   */
  stop(): void {
    if (!this.#listening) return;
    this.#listening = false;
    if (this.#bookmarkTimer !== undefined) clearInterval(this.#bookmarkTimer);
    this.#bookmarkTimer = undefined;
    this.#hub.closeAll(true);
    for (const res of this.#stalled) res.destroy();
    this.#stalled.clear();
    this.#http.close();
    for (const s of this.#sockets) s.destroy();
    this.#http.closeAllConnections();
  }

  /**
   * Listens again on the same port with the same storage (the first call,
   * made by {@link startApiServer}, picks the port).
   *
   * ## Example
   * ```ts
   * server.stop();
   * await server.restart();
   * ```
   *
   * @returns once the server accepts connections.
   */
  async restart(): Promise<void> {
    if (this.#closed) throw new Error('restart: the server was closed');
    if (this.#listening) return;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.#http.once('error', onError);
      this.#http.listen(this.#port, '127.0.0.1', () => {
        this.#http.off('error', onError);
        resolve();
      });
    });
    const addr = this.#http.address();
    if (addr !== null && typeof addr === 'object') this.#port = addr.port;
    this.#listening = true;
    this.#bookmarkTimer = setInterval(() => this.#hub.bookmarkAll(this.#storage.resourceVersion), this.#bookmarkIntervalMs);
    this.#bookmarkTimer.unref();
  }

  /**
   * Shuts the server down for good: stops churn, ends every connection and
   * releases the port.
   *
   * ## Example
   * ```ts
   * afterEach(() => server.close());
   * ```
   *
   * @returns once everything is released.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const c of [...this.#churns]) c.stop();
    const wasListening = this.#listening;
    const closed = wasListening ? new Promise<void>((resolve) => this.#http.once('close', () => resolve())) : Promise.resolve();
    this.stop();
    await closed;
  }

  /** Disposes the server with `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------- HTTP

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.#requests++;
    this.#route(req, res).catch((err: unknown) => {
      const status = err instanceof StatusError ? err : new StatusError(500, 'InternalError', `Internal error occurred: ${String(err)}`);
      if (!res.headersSent && !res.destroyed) this.#sendStatus(res, new DirectSink(res), status);
      else if (!res.destroyed) res.destroy();
    });
  }

  async #route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (this.#token !== undefined && req.headers.authorization !== `Bearer ${this.#token}`) {
      throw new StatusError(401, 'Unauthorized', 'Unauthorized');
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    const discovery = this.#discovery(url.pathname);
    if (discovery !== undefined) {
      if (method !== 'GET') throw new StatusError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      this.#sendJson(res, new DirectSink(res), 200, JSON.stringify(discovery));
      return;
    }
    const { target, legacyWatch } = this.#parsePath(url.pathname);
    const isWatch = legacyWatch || q.get('watch') === 'true' || q.get('watch') === '1';
    const verb = verbOf(method, target.name !== undefined, isWatch);
    if (verb === undefined) throw new StatusError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);

    // A request fault takes the request before anything else happens to it.
    // resetMidLine is a stream fault unless it was armed for a named non-watch verb: then it cuts that response's body.
    const fault = this.#faults.take(
      verb,
      target.type.id,
      (f, armedVerb) => !isStreamFault(f) || (f.type === 'resetMidLine' && armedVerb !== '*' && armedVerb !== 'watch'),
    );
    let sink: Sink = new DirectSink(res);
    let resetBody = false;
    if (fault !== undefined) {
      switch (fault.type) {
        case 'status': {
          const retry = fault.retryAfterSeconds ?? (fault.status === 429 || fault.status === 503 ? 1 : undefined);
          const err = injectedError(fault.status, fault.reason, fault.message);
          const withRetry =
            retry === undefined ? err : new StatusError(err.code, err.reason, err.message, { ...err.status.details, retryAfterSeconds: retry });
          req.resume();
          this.#sendStatus(res, sink, withRetry);
          return;
        }
        case 'stall':
          req.resume();
          this.#stalled.add(res);
          res.once('close', () => this.#stalled.delete(res));
          return;
        case 'trickle':
          sink = new TrickleSink(res, fault.bytesPerChunk, fault.intervalMs);
          break;
        case 'resetMidLine':
          resetBody = true;
          break;
        default:
          break;
      }
    }
    const send = (code: number, body: string): void => this.#sendJson(res, sink, code, body, resetBody);

    switch (verb) {
      case 'list':
        if (method === 'DELETE') {
          const body = await readBody(req);
          const preconditions = isRecord(body) && isRecord(body['preconditions']) ? (body['preconditions'] as Preconditions) : undefined;
          send(200, this.#deleteCollection(target, q, preconditions));
        } else send(200, this.#list(target, q));
        return;
      case 'watch':
        req.resume();
        this.#watch(target, q, res, sink);
        return;
      case 'get': {
        const o = this.#storage.get(target.type, target.namespace ?? '', target.name as string);
        if (o === undefined) throw notFound(target.type, target.name as string);
        send(200, o.json);
        return;
      }
      case 'create': {
        const body = await readBody(req);
        if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
        if (target.type.namespaced && target.namespace === undefined) throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
        send(201, this.#storage.create(target.type, body, target.namespace).json);
        return;
      }
      case 'update': {
        const body = await readBody(req);
        if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
        const meta = isRecord(body['metadata']) ? body['metadata'] : {};
        if (meta['name'] !== undefined && meta['name'] !== target.name) {
          throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${String(target.name)})`);
        }
        const withName = { ...body, metadata: { ...meta, name: target.name } };
        send(200, this.#storage.update(target.type, withName, target.namespace, statusOnly(target)).json);
        return;
      }
      case 'patch': {
        const body = await readBody(req);
        const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
        send(200, this.#applyPatch(target.type, target.namespace ?? '', target.name as string, contentType, body, statusOnly(target)).json);
        return;
      }
      case 'delete': {
        const body = await readBody(req);
        const preconditions = isRecord(body) && isRecord(body['preconditions']) ? (body['preconditions'] as Preconditions) : undefined;
        send(200, this.#delete(target.type, target.namespace ?? '', target.name as string, preconditions).json);
        return;
      }
      default:
        throw new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    }
  }

  /** Deletes one object, except that a namespace goes through the emulated namespace lifecycle. */
  #delete(type: ResourceType, namespace: string, name: string, preconditions: Preconditions | undefined): StoredObject {
    if (type.id !== NAMESPACES) return this.#storage.delete(type, namespace, name, preconditions);
    const current = this.#storage.get(type, '', name);
    if (current === undefined) throw notFound(type, name);
    if ((current.obj['metadata'] as AnyObject)['deletionTimestamp'] !== undefined) {
      throw conflict(type, name, 'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.');
    }
    const marked = this.#storage.markDeleting(type, '', name, preconditions, (obj) => {
      obj['status'] = { ...(isRecord(obj['status']) ? obj['status'] : {}), phase: 'Terminating' };
    });
    this.#terminating.add(name);
    this.#scheduleNamespaceCleanup(name);
    return marked;
  }

  /**
   * The namespace controller, emulated: runs after the write that asked for
   * it (as the real controller acts after the API call returns), deletes
   * every namespaced object in the namespace, and deletes the namespace once
   * nothing is left (objects with finalizers hold it until they go).
   */
  #scheduleNamespaceCleanup(name: string): void {
    if (this.#cleanupScheduled.has(name)) return;
    this.#cleanupScheduled.add(name);
    setImmediate(() => {
      this.#cleanupScheduled.delete(name);
      if (this.#closed) return;
      const nsType = this.#types.get(NAMESPACES);
      const ns = nsType === undefined ? undefined : this.#storage.get(nsType, '', name);
      if (nsType === undefined || ns === undefined || (ns.obj['metadata'] as AnyObject)['deletionTimestamp'] === undefined) {
        this.#terminating.delete(name);
        return;
      }
      let remaining = 0;
      for (const type of new Set(this.#types.values())) {
        if (!type.namespaced) continue;
        for (const o of this.#storage.list(type, name)) {
          const pending = (o.obj['metadata'] as AnyObject)['deletionTimestamp'] !== undefined;
          if (!pending) this.#storage.delete(type, name, o.name);
          if (this.#storage.get(type, name, o.name) !== undefined) remaining++;
        }
      }
      if (remaining > 0) return;
      this.#terminating.delete(name);
      this.#storage.delete(nsType, '', name);
    });
  }

  #applyPatch(type: ResourceType, namespace: string, name: string, contentType: string, patch: unknown, sub: 'status' | undefined): StoredObject {
    const current = this.#storage.get(type, namespace, name);
    if (current === undefined) throw notFound(type, name);
    const base = JSON.parse(current.json) as AnyObject;
    let next: unknown;
    switch (contentType) {
      case 'application/merge-patch+json':
      case 'application/strategic-merge-patch+json':
        if (!isRecord(patch)) throw badRequest('a merge patch must be a JSON object');
        next = mergePatch(base, patch);
        break;
      case 'application/json-patch+json':
        next = jsonPatch(base, patch);
        break;
      case 'application/apply-patch+yaml':
        throw new StatusError(415, 'UnsupportedMediaType', 'server-side apply is not supported by the rxkube simulator');
      default:
        throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
    }
    if (!isRecord(next)) throw badRequest('the patched object is not a JSON object');
    const meta = isRecord(next['metadata']) ? next['metadata'] : {};
    if (meta['name'] !== name) throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${name})`);
    return this.#storage.update(type, next, type.namespaced ? namespace : undefined, sub);
  }

  #parsePath(pathname: string): { target: Target; legacyWatch: boolean } {
    let parts: string[];
    try {
      parts = pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
    } catch {
      throw badRequest(`malformed request path ${JSON.stringify(pathname)}`);
    }
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api' && parts.length >= 3) {
      group = '';
      version = parts[1] as string;
      rest = parts.slice(2);
    } else if (parts[0] === 'apis' && parts.length >= 4) {
      group = parts[1] as string;
      version = parts[2] as string;
      rest = parts.slice(3);
    } else throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
    let legacyWatch = false;
    if (rest[0] === 'watch') {
      legacyWatch = true;
      rest = rest.slice(1);
    }
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    if (rest.length < 1 || rest.length > 3) throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
    const type = this.#byPath.get(`${group}|${version}|${rest[0] as string}`);
    if (type === undefined) throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
    if (namespace !== undefined && !type.namespaced) throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
    const name = rest[1];
    if (name !== undefined && type.namespaced && namespace === undefined) throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
    const subresource = rest[2];
    if (subresource !== undefined && subresource !== 'status') throw new StatusError(404, 'NotFound', NOT_FOUND_MESSAGE);
    return { target: { type, namespace, name, subresource }, legacyWatch };
  }

  #discovery(pathname: string): object | undefined {
    const p = pathname.replace(/\/+$/, '');
    if (p === '/version') {
      return { major: '1', minor: '34', gitVersion: 'v1.34.0-rxkube', platform: `${process.platform}/${process.arch}` };
    }
    const groups = new Map<string, Set<string>>();
    for (const t of this.#types.values()) {
      let versions = groups.get(t.group);
      if (versions === undefined) groups.set(t.group, (versions = new Set()));
      versions.add(t.version);
    }
    if (p === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.#port}` }] };
    if (p === '/apis') {
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [...groups].filter(([g]) => g !== '').map(([name, vs]) => {
          const versions = [...vs].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
          return { name, versions, preferredVersion: versions[0] };
        }),
      };
    }
    const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(p);
    if (m === null) return undefined;
    const group = m[1] !== undefined ? '' : (m[2] as string);
    const version = m[1] ?? (m[3] as string);
    if (!groups.get(group)?.has(version)) return undefined;
    const resources = [...this.#types.values()]
      .filter((t) => t.group === group && t.version === version)
      .flatMap((t) => [
        {
          name: t.plural,
          singularName: t.kind.toLowerCase(),
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        },
        { name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] },
      ]);
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
  }

  #filter(target: Target, q: URLSearchParams): ObjectFilter {
    const labelText = q.get('labelSelector') ?? '';
    const fieldText = q.get('fieldSelector') ?? '';
    let label: LabelSelector | undefined;
    let field: FieldSelector | undefined;
    try {
      if (labelText !== '') label = parseLabelSelector(labelText);
      if (fieldText !== '') field = parseFieldSelector(fieldText);
    } catch (err) {
      throw badRequest(`unable to parse requirement: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (field !== undefined) {
      for (const r of field.requirements) {
        if (!target.type.fields.has(r.field)) throw badRequest(`field label not supported: ${r.field}`);
      }
    }
    return {
      namespace: target.namespace,
      label: label === undefined || label.empty ? undefined : label,
      field: field === undefined || field.empty ? undefined : field,
    };
  }

  #list(target: Target, q: URLSearchParams): string {
    const type = target.type;
    const filter = this.#filter(target, q);
    const limitText = q.get('limit') ?? '';
    const limit = limitText === '' ? 0 : Number(limitText);
    if (!Number.isSafeInteger(limit)) throw badRequest(`limit: invalid value ${JSON.stringify(limitText)}`);
    const rvText = q.get('resourceVersion') ?? '';
    const match = q.get('resourceVersionMatch') ?? '';
    const cont = q.get('continue') ?? '';
    let snapRv: number | undefined;
    let read: 'exact' | 'continue' | undefined;
    let start: string | undefined;
    if (cont !== '') {
      if (rvText !== '' && rvText !== '0') throw badRequest('specifying resource version is not allowed when using continue');
      if (match !== '') throw invalid('ListOptions.meta.k8s.io ""', 'resourceVersionMatch', 'Forbidden: resourceVersionMatch is forbidden when continue is provided');
      const pos = decodeContinue(cont);
      snapRv = pos.rv;
      start = pos.start;
      read = 'continue';
    } else {
      if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
        throw invalid('ListOptions.meta.k8s.io ""', 'resourceVersionMatch', `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
      }
      if (match !== '' && rvText === '') {
        throw invalid('ListOptions.meta.k8s.io ""', 'resourceVersionMatch', 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
      }
      if (match === 'Exact' && rvText === '0') {
        throw invalid('ListOptions.meta.k8s.io ""', 'resourceVersionMatch', 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      }
      if (rvText !== '' && rvText !== '0') {
        const rv = parseRv(rvText);
        // Without resourceVersionMatch, a paged list at an explicit resourceVersion is an exact read (the legacy rule).
        if (match === 'Exact' || (match === '' && limit > 0)) {
          snapRv = rv;
          read = 'exact';
        } else if (rv > this.#storage.resourceVersion) throw tooLargeResourceVersion(rv, this.#storage.resourceVersion);
      }
    }
    const snap = this.#storage.snapshot(type, snapRv, read);
    const keys = snap.keys;
    const [from, to] = keyRange(keys, type, filter.namespace);
    let i = start === undefined ? from : Math.max(from, lowerBound(keys, start));
    const items: string[] = [];
    let lastKey: string | undefined;
    for (; i < to; i++) {
      const key = keys[i] as string;
      const o = snap.get(key);
      if (o === undefined || !passes(filter, o)) continue;
      items.push(o.json);
      if (limit > 0 && items.length >= limit) {
        lastKey = key;
        i++;
        break;
      }
    }
    const meta: string[] = [`"resourceVersion":"${snap.rv}"`];
    if (lastKey !== undefined && i < to) {
      meta.push(`"continue":${JSON.stringify(encodeContinue(snap.rv, lastKey))}`);
      if (filter.label === undefined && filter.field === undefined) meta.push(`"remainingItemCount":${to - i}`);
    }
    return `{"kind":"${type.listKind}","apiVersion":"${type.apiVersion}","metadata":{${meta.join(',')}},"items":[${items.join(',')}]}`;
  }

  #deleteCollection(target: Target, q: URLSearchParams, preconditions: Preconditions | undefined): string {
    const type = target.type;
    const filter = this.#filter(target, q);
    const items: string[] = [];
    for (const o of this.#storage.list(type, filter.namespace)) {
      if (!passes(filter, o)) continue;
      items.push(this.#delete(type, o.namespace, o.name, preconditions).json);
    }
    return `{"kind":"${type.listKind}","apiVersion":"${type.apiVersion}","metadata":{"resourceVersion":"${this.#storage.resourceVersion}"},"items":[${items.join(',')}]}`;
  }

  #watch(target: Target, q: URLSearchParams, res: http.ServerResponse, sink: Sink): void {
    const type = target.type;
    const filter = this.#filter(target, q);
    const rvText = q.get('resourceVersion') ?? '';
    const match = q.get('resourceVersionMatch') ?? '';
    const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
    const sieText = q.get('sendInitialEvents');
    const timeoutText = q.get('timeoutSeconds') ?? '';
    const timeout = timeoutText === '' ? 0 : Number(timeoutText);
    if (!Number.isSafeInteger(timeout) || timeout < 0) throw badRequest(`timeoutSeconds: invalid value ${JSON.stringify(timeoutText)}`);
    const what = 'ListOptions.meta.k8s.io ""';
    let sendInitial: boolean | undefined;
    // Every field error of the options is reported in one 422, in kube-apiserver's order.
    const causes: FieldCause[] = [];
    const forbidden = (field: string, why: string): void => {
      causes.push({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${why}` });
    };
    if (sieText !== null) {
      if (sieText !== 'true' && sieText !== 'false') throw badRequest(`sendInitialEvents: invalid value ${JSON.stringify(sieText)}`);
      sendInitial = sieText === 'true';
      if (match !== 'NotOlderThan') forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
      if (!this.#watchList) forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
    } else if (match !== '') {
      forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    if (causes.length > 0) throw invalidFields('meta.k8s.io', 'ListOptions', causes);
    if (sendInitial === true && !bookmarks) throw invalid(what, 'allowWatchBookmarks', 'Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true');
    const current = this.#storage.resourceVersion;
    const rv = rvText === '' || rvText === '0' ? undefined : parseRv(rvText);
    if (sendInitial === true && rv !== undefined && rv > current) throw tooLargeResourceVersion(rv, current);

    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const watcher = new Watcher(this.#hub, type, filter, bookmarks, res, sink, rv ?? current);
    if (timeout > 0) watcher.endAfter(timeout, () => this.#storage.resourceVersion);
    const errorFault = this.#faults.take('watch', type.id, (f) => f.type === 'errorEvent');
    if (errorFault?.type === 'errorEvent') {
      watcher.sendError(injectedError(errorFault.status ?? 410, errorFault.reason, errorFault.message));
      return;
    }
    if (sendInitial === true || (sendInitial === undefined && rv === undefined)) {
      // Initial state: ADDED for every matching object, then (watch-list) the end-of-initial-events bookmark.
      const snap = this.#storage.snapshot(type, undefined);
      const [from, to] = keyRange(snap.keys, type, filter.namespace);
      for (let i = from; i < to && !watcher.closed; i++) {
        const o = snap.get(snap.keys[i] as string);
        if (o !== undefined && passes(filter, o)) watcher.pushAdded(o);
      }
      if (sendInitial === true) watcher.bookmark(current, true);
    } else if (rv !== undefined) {
      let replay: HistoryEvent[];
      try {
        replay = this.#storage.eventsSince(type, rv);
      } catch (err) {
        if (err instanceof StatusError) {
          watcher.sendError(err);
          return;
        }
        throw err;
      }
      for (const e of replay) watcher.offer(e);
    }
    if (watcher.closed) return;
    this.#hub.add(watcher);
  }

  #sendStatus(res: http.ServerResponse, sink: Sink, err: StatusError): void {
    const retry = err.status.details?.retryAfterSeconds;
    if (retry !== undefined && !res.headersSent && (err.code === 429 || err.code === 503 || err.code === 504)) res.setHeader('Retry-After', String(retry));
    this.#sendJson(res, sink, err.code, JSON.stringify(err.status satisfies Status));
  }

  #sendJson(res: http.ServerResponse, sink: Sink, code: number, body: string, resetMidway = false): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private' });
    if (resetMidway) {
      const bytes = Buffer.from(body);
      res.write(bytes.subarray(0, Math.max(1, bytes.length >> 1)), () => resetSocket(res));
      return;
    }
    sink.write(body);
    sink.end();
  }
}

function verbOf(method: string, named: boolean, watch: boolean): Exclude<FaultVerb, '*'> | undefined {
  switch (method) {
    case 'GET':
      return named ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return named ? undefined : 'create';
    case 'PUT':
      return named ? 'update' : undefined;
    case 'PATCH':
      return named ? 'patch' : undefined;
    case 'DELETE':
      // A collection DELETE (deletecollection) counts as a list for faults.
      return named ? 'delete' : 'list';
    default:
      return undefined;
  }
}

function statusOnly(target: Target): 'status' | undefined {
  return target.subresource === 'status' ? 'status' : undefined;
}

function parseRv(text: string): number {
  const rv = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(rv)) {
    throw badRequest(`invalid resource version: ${JSON.stringify(text)} is not a non-negative integer`);
  }
  return rv;
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) throw new StatusError(413, 'RequestEntityTooLarge', 'the request body is too large');
    chunks.push(b);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function copyIn(obj: unknown, method: string): AnyObject {
  if (!isRecord(obj)) throw new TypeError(`${method}: the object must be a plain object, got ${String(obj)}`);
  // A JSON round trip gives the storage its own copy and turns client-node's Date fields into wire strings.
  return JSON.parse(JSON.stringify(obj)) as AnyObject;
}

function copyOut<T>(o: StoredObject): T {
  return JSON.parse(o.json) as T;
}
