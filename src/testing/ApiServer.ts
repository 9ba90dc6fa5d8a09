import type { ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { Churn, type ChurnOptions } from './faults/churn.js';
import type { ServerContext } from './context.js';
import { eventResources } from './storage/eventResources.js';
import { FaultBoard, validateFault } from './faults/faults.js';
import type { HistoryEvent } from './storage/history.js';
import { kubeConfigYaml } from './tls/kubeconfig.js';
import { Listener } from './server/listener.js';
import { NamespaceLifecycle } from './storage/namespaceLifecycle.js';
import { validateOptions, validateRestartOptions, type ApiServerFaults, type ApiServerOptions, type RestartOptions } from './options.js';
import { ResourceRegistry } from './storage/registry.js';
import { builtInResources, type ResourceDefinition } from './storage/resources.js';
import { CrdController } from './crd/crdController.js';
import { createRequestHandler } from './server/router.js';
import { Storage } from './storage/storage.js';
import { StorageApi } from './storage/storageApi.js';
import { generateServingCertificate, type ServingCertificate } from './tls/tls.js';
import { WatchHub } from './watch/watch.js';
import { usersByToken } from './auth/users.js';
import { WebhookAdmission } from './admission/dispatch.js';
import { describeValue } from '../options/validate.js';
import { timerDelay } from '../options/timerDelay.js';

export type { ApiServerFaults, ApiServerOptions, AuditEvent, RestartOptions } from './options.js';
export type { ResourceName } from './storage/registry.js';

/**
 * Starts an in-process Kubernetes API server on 127.0.0.1 that speaks the
 * real list/watch protocol over HTTP (or HTTPS), for tests, demos and
 * benchmarks that have no cluster.
 *
 * It keeps objects in memory with etcd-like MVCC (one global, increasing
 * resourceVersion and an event log), serves the REST verbs with
 * kube-apiserver's Status errors, paged and consistent lists, watches with
 * bookmarks and selectors, metadata-only responses (PartialObjectMetadata),
 * CustomResourceDefinitions (served, validated, with their subresources and
 * printer columns) and scriptable faults. See the README beside this file for how it
 * differs from a real kube-apiserver.
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
export class ApiServer extends StorageApi {
  // What the request handlers share: the storage (kept across stop()/restart(), the point of a restart), the
  // resources served, the faults, every open watch, the namespace lifecycle and the accepted tokens.
  readonly #ctx: ServerContext;
  // The emulated apiextensions controllers: CRDs written become served resources.
  readonly #crds: CrdController;
  // The port, the sockets and the TLS material, kept across restarts.
  readonly #listener: Listener;
  // Kept so the kubeconfig can carry the CA.
  readonly #cert: ServingCertificate | undefined;
  // Running churn generators, stopped by close().
  readonly #churns = new Set<Churn>();
  // For stats: tests use it to see that a request reached the server.
  #requests = 0;
  // Periodic bookmarks; only runs while listening.
  #bookmarkTimer: NodeJS.Timeout | undefined;

  /** Scriptable faults; see {@link ApiServerFaults}. */
  readonly faults: ApiServerFaults;

  /**
   * Use {@link startApiServer}; the constructor does not listen.
   * @internal
   * @param options validated server options.
   * @param cert the serving certificate when TLS is on.
   */
  constructor(options: ApiServerOptions, cert: ServingCertificate | undefined) {
    validateOptions(options);
    const faults = new FaultBoard();
    const hub = new WatchHub(faults);
    // Bound once it exists: the storage needs the observer, the lifecycle needs the storage.
    let lifecycle: NamespaceLifecycle | undefined;
    let crds: CrdController | undefined;
    const storage = new Storage(options.history?.maxEvents ?? 10_000, options.history?.maxAgeMs, (e: HistoryEvent) => {
      hub.dispatch(e);
      lifecycle?.observe(e);
      crds?.observe(e);
    });
    const registry = new ResourceRegistry(storage);
    lifecycle = new NamespaceLifecycle(storage, registry);
    crds = new CrdController(storage, registry, (id) => hub.endResource(id));
    lifecycle.finishedBy(crds.type.id, CrdController.terminatingMark);
    super(storage, registry, lifecycle);
    this.#crds = crds;
    this.#cert = cert;
    for (const t of [...builtInResources(), ...eventResources()]) registry.add(t);
    const admission = new WebhookAdmission(storage, registry);
    for (const t of admission.types) registry.add(t);
    for (const def of options.resources ?? []) registry.register(def);
    for (const crd of options.crds ?? []) storage.create(crds.type, structuredClone(crd) as Record<string, unknown>, undefined);
    const stalled = new Set<ServerResponse>();
    const ctx: ServerContext = {
      storage,
      registry,
      faults,
      hub,
      namespaces: lifecycle,
      tokens: options.token === undefined ? undefined : new Set([options.token]),
      users: usersByToken(options.users, options.token),
      authorize: options.authorize,
      admission,
      compression: options.compression ?? true,
      watchList: options.watchList ?? true,
      stalled,
      audit: options.audit,
      port: () => this.#listener.port,
    };
    this.#ctx = ctx;
    const handle = createRequestHandler(ctx);
    const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
    this.#listener = new Listener(
      options.port ?? 0,
      cert,
      (req, res) => {
        this.#requests++;
        handle(req, res);
      },
      {
        up: () => {
          this.#bookmarkTimer = setInterval(() => hub.bookmarkAll(storage.resourceVersion), timerDelay(bookmarkIntervalMs));
          this.#bookmarkTimer.unref();
        },
        down: () => {
          if (this.#bookmarkTimer !== undefined) clearInterval(this.#bookmarkTimer);
          this.#bookmarkTimer = undefined;
          hub.closeAll(true);
          for (const res of stalled) res.destroy();
          stalled.clear();
        },
      },
      options.http2 === true,
    );
    this.faults = {
      closeWatches: () => hub.closeAll(false),
      resetConnections: () => {
        hub.flushAll();
        this.#listener.reset();
      },
      inject: (fault, target) => faults.add(validateFault(fault, target)),
      delayWatches: (opts) => hub.delays.add(opts),
      clear: () => {
        faults.clear();
        hub.delays.clear();
      },
      pending: () => faults.pending,
    };
  }

  /** `http://127.0.0.1:PORT` or `https://…` when TLS is on. */
  get url(): string {
    return `${this.#cert === undefined ? 'http' : 'https'}://127.0.0.1:${this.#listener.port}`;
  }

  /** The port, fixed once the server first listened (restart reuses it). */
  get port(): number {
    return this.#listener.port;
  }

  /** The CA certificate (PEM) clients must trust when TLS is on. */
  get caPem(): string | undefined {
    return this.#cert?.caPem;
  }

  /** Counters for tests and benchmarks. */
  get stats(): {
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
    /** TCP connections accepted since the server began, closed ones included (each a handshake over TLS). */
    readonly connectionsAccepted: number;
    /** The current global resourceVersion. */
    readonly resourceVersion: string;
  } {
    return {
      requests: this.#requests,
      watchesOpen: this.#ctx.hub.open,
      watchesStarted: this.#ctx.hub.counters.watchesStarted,
      eventsSent: this.#ctx.hub.counters.eventsSent,
      objects: this.#ctx.storage.objectCount,
      historyEvents: this.#ctx.storage.historySize,
      connections: this.#listener.connections,
      connectionsAccepted: this.#listener.accepted,
      resourceVersion: String(this.#ctx.storage.resourceVersion),
    };
  }

  /**
   * A client-node KubeConfig pointing at this server, with the CA and token
   * when they are in use.
   *
   * ## Example
   * ```ts
   * import { CoreV1Api } from '@kubernetes/client-node';
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
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
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * writeFileSync('/tmp/kubeconfig', server.kubeConfigYaml());
   * ```
   *
   * @returns the YAML document.
   */
  kubeConfigYaml(): string {
    const tokens = this.#ctx.tokens;
    return kubeConfigYaml({ url: this.url, caPem: this.#cert?.caPem, token: tokens === undefined ? undefined : [...tokens].pop() });
  }

  /**
   * Accepts `token` as a bearer token from now on, beside the others; the
   * kubeconfig then carries it. Only for a server started with a `token`.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * server.acceptToken('rotated'); // as the kubelet's new service-account token becomes valid
   * server.revokeToken('original'); // and the old one expires: its requests now get 401
   * ```
   *
   * @param token A non-empty token without whitespace.
   */
  acceptToken(token: string): void {
    this.#tokensFor('acceptToken', token).add(token);
  }

  /**
   * Refuses `token` from now on (401 Unauthorized), as kube-apiserver refuses
   * an expired or deleted service-account token. Like kube-apiserver, it
   * checks a token when a request arrives: a watch already open stays open.
   *
   * @param token A token given to `startApiServer` or {@link ApiServer.acceptToken}.
   */
  revokeToken(token: string): void {
    this.#tokensFor('revokeToken', token).delete(token);
  }

  #tokensFor(method: string, token: string): Set<string> {
    if (this.#ctx.tokens === undefined) throw new TypeError(`${method}: the server was started without a token, so it authenticates nobody`);
    if (typeof token !== 'string' || token === '' || /\s/.test(token)) throw new TypeError(`${method}: token must be a non-empty string without whitespace, got ${describeValue(token)}`);
    if (this.#ctx.users.has(token)) throw new TypeError(`${method}: the token is a user's of the users option, not the admin's`);
    return this.#ctx.tokens;
  }

  /**
   * Serves a custom resource from now on, by its names alone: no schema, no
   * printer columns, no scale subresource. To serve a CRD as kube-apiserver
   * does, create it (`apiextensions.k8s.io/v1/customresourcedefinitions`)
   * or pass it in the `crds` option. Registering the same definition twice
   * is harmless; a different one under the same name throws.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
   * await server.create('example.com/v1/widgets', { metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
   * ```
   *
   * @param def the resource's names and scope.
   * @returns the resource's id, e.g. `example.com/v1/widgets`.
   */
  registerResource(def: ResourceDefinition): string {
    return this.#ctx.registry.register(def);
  }

  /**
   * Generates create / update / delete churn at a steady rate through the
   * storage, as a controller-heavy cluster would.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * const churn = server.churn({ resource: 'v1/pods', namespace: 'default', creates: 100, updates: 300, deletes: 50, perSecond: 500 });
   * await churn.done;
   * ```
   *
   * @param options what to write and how fast.
   * @returns a handle with `done` and `stop()`.
   */
  churn(options: ChurnOptions): Churn {
    const type = this.#ctx.registry.resolve(options?.resource ?? 'v1/pods', 'churn');
    const churn = new Churn(this.#ctx.storage, type, options, () => this.#churns.delete(churn));
    this.#churns.add(churn);
    return churn;
  }

  /**
   * Stops listening and drops every connection while keeping the port and
   * the storage: clients see ECONNREFUSED until {@link ApiServer.restart}.
   *
   * ## Example
   * ```ts
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   * server.stop();
   * await server.restart();
   * ```
   */
  stop(): void {
    this.#listener.stop();
  }

  /**
   * Restarts the server as a kube-apiserver restarts with etcd persisting:
   * every connection and the listener close (open watches end abruptly,
   * parked requests are dropped), the server stays down for `downMs`
   * (connections are refused meanwhile), then it listens again on the same
   * port with the same storage, resourceVersions, TLS material and tokens.
   * After {@link ApiServer.stop} it only waits `downMs` and listens again.
   * If the server is closed while down, the returned promise resolves
   * without listening.
   *
   * ## Example
   * ```ts
   * import { startApiServer } from 'rxkube/testing';
   *
   * const server = await startApiServer();
   * await server.create('v1/pods', { metadata: { name: 'web', namespace: 'default' } });
   * await server.restart({ downMs: 200 }); // clients are refused for 200 ms
   * server.list('v1/pods'); // still [web], at the same resourceVersion
   * ```
   *
   * @param options how long to stay down.
   * @returns once the server accepts connections again.
   */
  async restart(options?: RestartOptions): Promise<void> {
    const downMs = validateRestartOptions(options);
    if (this.#listener.closed) throw new Error('restart: the server was closed');
    await this.#listener.restart(downMs);
  }

  /**
   * Shuts the server down for good: stops churn, ends every connection and
   * releases the port.
   *
   * ## Example
   * ```ts
   * import { afterEach } from 'vitest';
   * import type { ApiServer } from 'rxkube/testing';
   * declare const server: ApiServer;
   *
   * afterEach(() => server.close());
   * ```
   *
   * @returns once everything is released.
   */
  async close(): Promise<void> {
    if (this.#listener.closed) return;
    for (const c of [...this.#churns]) c.stop();
    this.#ctx.namespaces.stop();
    this.#crds.stop();
    await this.#listener.close();
  }

  /** Disposes the server with `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
