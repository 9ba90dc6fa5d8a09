import { HttpMethod, RequestContext, type KubeConfig, type User } from '@kubernetes/client-node';
import { buildConnector, Pool, type Dispatcher } from 'undici';
import type { ConnectionTarget } from './connection.js';
import { withLivenessCheck } from './liveness.js';

/** One request's hold on a pool: the dispatcher to send with, and `release` once its answer is read or dropped. */
export interface Lease {
  readonly dispatcher: Dispatcher;
  /** Idempotent: the second call does nothing. */
  release(): void;
}

/**
 * Seconds an idle kept-alive HTTP/1.1 connection of a busy pool stays open;
 * the server's own `Keep-Alive: timeout` wins when it sends one.
 * kube-apiserver drops idle connections after 90 s, client-go after 90 s too.
 */
const KEEP_ALIVE_MS = 30_000;

/** HTTP/2 flow control: per stream as client-go's transport, and four streams' worth for the connection. */
const H2_STREAM_WINDOW = 4 * 1024 * 1024;
const H2_CONNECTION_WINDOW = 16 * 1024 * 1024;

/**
 * The connections of one {@link ConnectionTarget}: an undici pool for one
 * origin and one set of TLS material and transport options, shared by
 * every request of the process that resolves to the same target.
 */
class ConnectionPool {
  readonly key: string;
  /** Told when the pool closes; asked whether a request is still resolving its credentials. */
  readonly registry: PoolRegistry;
  readonly #dispatcher: Dispatcher;
  /** Requests holding a lease; the pool closes once this is zero (see {@link PoolRegistry}). */
  #inFlight = 0;
  #closed = false;
  /** A close check is queued for the next turn of the event loop. */
  #closeQueued = false;
  /**
   * Resolves one event-loop turn after the last request ended. undici hands
   * an HTTP/1.1 socket back to the pool a turn after its response ended (to
   * see whether the server closes it after all); a request sent sooner finds
   * it busy and opens a second connection. A next page or a next write waits
   * this turn and reuses the socket.
   */
  #settled: Promise<void> | undefined;

  constructor(key: string, dispatcher: Dispatcher, registry: PoolRegistry) {
    this.key = key;
    this.registry = registry;
    this.#dispatcher = dispatcher;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Takes a lease at once (so no close can slip in), usable once the pool settled. */
  take(): { readonly lease: Lease; readonly ready: Promise<void> | undefined } {
    this.#inFlight++;
    let released = false;
    const lease: Lease = {
      dispatcher: this.#dispatcher,
      release: () => {
        if (released) return;
        released = true;
        this.#inFlight--;
        this.#settled = new Promise<void>((resolve) => setImmediate(resolve));
        this.maybeClose();
      },
    };
    return { lease, ready: this.#settled };
  }

  /** Queues a close for the next turn if no request holds the pool then and none is still resolving credentials. */
  maybeClose(): void {
    if (this.#closed || this.#closeQueued || this.#inFlight > 0) return;
    this.#closeQueued = true;
    setImmediate(() => {
      this.#closeQueued = false;
      if (this.#inFlight > 0 || this.#closed || this.registry.resolving > 0) return;
      this.close();
    });
  }

  /** Closes every connection now; requests still on it fail (their owners already let go). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.registry.forget(this);
    void this.#dispatcher.destroy().catch(() => undefined);
  }
}

/**
 * Every connection pool of the process, by {@link ConnectionTarget.key}
 * (internal).
 *
 * A pool is made by the first request for its target and lives while
 * requests use it: once its last request ended and nothing else came within
 * the same turn of the event loop, it closes, so a process that stopped
 * every list, watch and write holds no socket. TLS material that changed
 * (a rotated client certificate or CA) gives requests a new key, hence a
 * new pool, and the old one closes as its last request ends.
 */
export class PoolRegistry {
  readonly #pools = new Map<string, ConnectionPool>();
  /** Requests between their start and their lease, whose pool is not known yet: no idle pool closes meanwhile. */
  #resolving = 0;

  get resolving(): number {
    return this.#resolving;
  }

  /** Pools open now (for tests and the benchmark). */
  get size(): number {
    return this.#pools.size;
  }

  /**
   * Runs `resolve` (reading credentials and TLS material) while keeping idle
   * pools open, then leases the pool of the target it answered.
   *
   * @param kc For a proxy: client-node builds the proxy's dispatcher.
   * @param resolve Finds the target of this request.
   * @returns The lease and whatever `resolve` answered.
   */
  async lease<R extends { readonly target: ConnectionTarget }>(kc: KubeConfig, resolve: () => Promise<R>): Promise<{ readonly resolved: R; readonly lease: Lease }> {
    this.#resolving++;
    let taken: ReturnType<ConnectionPool['take']>;
    let resolved: R;
    try {
      resolved = await resolve();
      taken = (await this.#poolFor(kc, resolved.target)).take();
    } finally {
      this.#resolving--;
      if (this.#resolving === 0) for (const pool of this.#pools.values()) pool.maybeClose();
    }
    if (taken.ready !== undefined) await taken.ready;
    return { resolved, lease: taken.lease };
  }

  forget(pool: ConnectionPool): void {
    if (this.#pools.get(pool.key) === pool) this.#pools.delete(pool.key);
  }

  /** Closes every pool at once (tests and benchmarks). */
  closeAll(): void {
    for (const pool of [...this.#pools.values()]) pool.close();
  }

  async #poolFor(kc: KubeConfig, target: ConnectionTarget): Promise<ConnectionPool> {
    const existing = this.#pools.get(target.key);
    if (existing !== undefined) return existing;
    const dispatcher = await createDispatcher(kc, target);
    // Another request may have made the pool while the proxy's dispatcher was being built.
    const raced = this.#pools.get(target.key);
    if (raced !== undefined) {
      void dispatcher.destroy().catch(() => undefined);
      return raced;
    }
    const pool = new ConnectionPool(target.key, dispatcher, this);
    this.#pools.set(target.key, pool);
    return pool;
  }
}

/** The process's pools: one registry, so every source and client of the process shares connections. */
export const pools = new PoolRegistry();

/**
 * The dispatcher of a new pool. Without a proxy: an undici Pool for the
 * origin, with the target's TLS material, HTTP/2 offered or not, TCP
 * keep-alive probes after 30 s (as client-go) and the HTTP/2 liveness
 * check. Behind a proxy (`proxy-url`: HTTP CONNECT or SOCKS) client-node
 * builds it, as it would for its own requests; it is kept for the pool's
 * life like any other, but neither the protocol option nor the liveness
 * check reaches inside it.
 */
/**
 * HTTP/2 session options of every pool. The liveness check replaces undici's PING, which is sent every minute
 * and never times out. The windows are what the server may send before the client acknowledges: with undici's
 * 256 KiB per stream a LIST crawls at one window per round trip (25 MB/s at 10 ms); Go's client offers 4 MiB.
 * undici 8 reads the stream window from `initialWindowSize` (its types name only `settings.initialWindowSize`,
 * which it checks but does not send), so both are given.
 */
const h2Options = {
  pingInterval: 0,
  connectionWindowSize: H2_CONNECTION_WINDOW,
  settings: { initialWindowSize: H2_STREAM_WINDOW },
  initialWindowSize: H2_STREAM_WINDOW,
} satisfies Pool.Options['h2Options'] & { initialWindowSize: number };

async function createDispatcher(kc: KubeConfig, target: ConnectionTarget): Promise<Dispatcher> {
  if (target.proxyUrl !== undefined) {
    const ctx = new RequestContext(`${target.origin}/`, HttpMethod.GET);
    // Only the dispatcher is kept: client-node must build it from the target's TLS material without running a
    // credential provider of its own (an exec plugin it cannot stop, a token file it reads synchronously).
    await tlsOnly(kc, target).applySecurityAuthentication(ctx);
    const built = ctx.getDispatcher() as Dispatcher | undefined;
    if (built !== undefined) return built;
  }
  const { http2, readIdleTimeoutMs, pingTimeoutMs } = target.options;
  const tls = Object.fromEntries(Object.entries(target.tls).filter(([, v]) => v !== undefined));
  const connect = buildConnector({ ...tls, allowH2: http2, keepAlive: true, keepAliveInitialDelay: 30_000 });
  return new Pool(target.origin, {
    connect: http2 ? withLivenessCheck(connect, readIdleTimeoutMs, pingTimeoutMs) : connect,
    allowH2: http2,
    keepAliveTimeout: KEEP_ALIVE_MS,
    h2Options,
  });
}

/**
 * A view of `kc` whose current user is the target's client certificate and
 * key and nothing else, so client-node builds the proxy's dispatcher with
 * the TLS material rxkube resolved (an exec plugin's certificate included)
 * and runs no credential provider.
 */
function tlsOnly(kc: KubeConfig, target: ConnectionTarget): KubeConfig {
  const base64 = (v: string | Buffer | undefined): string | undefined => (v === undefined ? undefined : Buffer.from(v).toString('base64'));
  const name = kc.getCurrentUser()?.name ?? 'rxkube';
  const user: User = { name, certData: base64(target.tls.cert), keyData: base64(target.tls.key) };
  const view = Object.create(kc) as KubeConfig;
  view.getCurrentUser = () => user;
  return view;
}
