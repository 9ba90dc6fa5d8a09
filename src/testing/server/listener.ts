import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { ServingCertificate } from '../tls/tls.js';
import { timerDelay } from '../../options/timerDelay.js';

/** What the listener tells its owner: `up` once the port accepts connections again, `down` before they are dropped. */
type ListenerHooks = { readonly up: () => void; readonly down: () => void };

/**
 * The simulator's TCP side: one HTTP(S) server object for its whole life,
 * so it can stop and listen again on the same port (a restart), and the
 * open sockets, so a stop or a reset can drop them at once.
 */
export class Listener {
  // One server object for the whole life, so a restart listens again with the same TLS material.
  readonly #http: http.Server | http2.Http2SecureServer;
  // Open sockets, so stop() and reset() can drop them at once.
  readonly #sockets = new Set<Socket>();
  // Tell the owner when watches and timers must start or stop with the port.
  readonly #hooks: ListenerHooks;
  // 0 until the first listen picks a port; then fixed, so a restart comes back where clients expect it.
  #port: number;
  // Connections accepted since the start, for stats: how many handshakes clients paid for.
  #accepted = 0;
  // Whether stop() has something to stop.
  #listening = false;
  // close() is final: listen() refuses after it, and a pending restart gives up.
  #closed = false;
  // The down time of a restart in progress, cleared by close().
  #downTimer: NodeJS.Timeout | undefined;
  // Resolves the restart waiting on #downTimer when close() cancels it.
  #cancelDown: (() => void) | undefined;

  /**
   * @param http2 With `cert`: offer HTTP/2 in the TLS handshake (HTTP/1.1 stays available), as kube-apiserver does.
   * The handler then also receives node's HTTP/2 compatibility request and response objects.
   */
  constructor(port: number, cert: ServingCertificate | undefined, handler: http.RequestListener, hooks: ListenerHooks, http2Offered = false) {
    this.#port = port;
    this.#hooks = hooks;
    if (cert !== undefined && http2Offered) {
      this.#http = http2.createSecureServer({ key: cert.keyPem, cert: cert.certPem, allowHTTP1: true }, handler as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
    } else {
      const server = cert === undefined ? http.createServer(handler) : https.createServer({ key: cert.keyPem, cert: cert.certPem }, handler);
      server.keepAliveTimeout = 30_000;
      // Watches are long requests; node's default 5-minute request timeout would cut them where kube-apiserver does not.
      server.requestTimeout = 0;
      this.#http = server;
    }
    this.#http.on('connection', (socket: Socket) => {
      this.#accepted++;
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  get port(): number {
    return this.#port;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Open TCP connections. */
  get connections(): number {
    return this.#sockets.size;
  }

  /** TCP connections accepted since the server began, closed ones included. */
  get accepted(): number {
    return this.#accepted;
  }

  /**
   * Listens on the port; a no-op while listening. The first call picks the port when it is 0: one outside the range
   * the OS hands out to outgoing connections where that range is known (Linux), because a port from it can become
   * the source port of some other process's connection while the server is down, and the restart would then fail
   * with EADDRINUSE, as a real API server's fixed port never does.
   */
  async listen(): Promise<void> {
    if (this.#closed) throw new Error('restart: the server was closed');
    if (this.#listening) return;
    if (this.#port === 0) {
      for (const port of stablePorts()) {
        if (await this.#tryListen(port)) break;
      }
    }
    if (!this.#http.listening) await this.#listenOn(this.#port);
    const addr = this.#http.address();
    if (addr !== null && typeof addr === 'object') this.#port = addr.port;
    this.#listening = true;
    this.#hooks.up();
  }

  async #listenOn(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.#http.once('error', onError);
      this.#http.listen(port, '127.0.0.1', () => {
        this.#http.off('error', onError);
        resolve();
      });
    });
  }

  // Whether listening on `port` worked; false when it is taken.
  async #tryListen(port: number): Promise<boolean> {
    try {
      await this.#listenOn(port);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') return false;
      throw err;
    }
  }

  /** Stops accepting and drops every connection; the port stays reserved for listen(). */
  stop(): void {
    if (!this.#listening) return;
    this.#listening = false;
    this.#hooks.down();
    this.#http.close();
    for (const s of this.#sockets) s.destroy();
    if ('closeAllConnections' in this.#http) this.#http.closeAllConnections();
  }

  /** Stops, stays down `downMs` (connections refused), then listens again; resolves early, not listening, if close() comes first. */
  async restart(downMs: number): Promise<void> {
    if (this.#closed) throw new Error('restart: the server was closed');
    this.stop();
    if (downMs > 0) {
      await new Promise<void>((resolve) => {
        this.#cancelDown = resolve;
        this.#downTimer = setTimeout(resolve, timerDelay(downMs));
      });
      this.#downTimer = undefined;
      this.#cancelDown = undefined;
      if (this.#closed) return;
    }
    await this.listen();
  }

  /** Resets every open socket (RST where the platform allows). */
  reset(): void {
    for (const s of [...this.#sockets]) {
      // resetAndDestroy() on a socket whose shutdown is under way (end() called, not finished) fails inside Node with
      // EINVAL and never closes the handle; destroy() does.
      if (typeof s.resetAndDestroy === 'function' && !s.writableEnded) s.resetAndDestroy();
      else s.destroy();
    }
  }

  /** Shuts down for good and releases the port. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#downTimer !== undefined) clearTimeout(this.#downTimer);
    this.#cancelDown?.();
    const closed = this.#listening ? new Promise<void>((resolve) => this.#http.once('close', () => resolve())) : Promise.resolve();
    this.stop();
    await closed;
  }
}

// Ports below this are left to fixed services; the simulator (and the e2e tier's kube-apiserver) picks from here up to
// the ephemeral range.
const LOWEST_PICKED_PORT = 10_000;
// Random tries before falling back to a port the OS picks.
const PORT_TRIES = 16;

/**
 * Random ports between {@link LOWEST_PICKED_PORT} and the start of the OS's ephemeral range, which no outgoing
 * connection is given, so a server that must listen on the same port again after a restart finds it free; none
 * where that range is unknown or leaves too little room, so the caller lets the OS pick.
 *
 * @example
 * ```ts
 * for (const port of stablePorts()) if (await tryListen(port)) break;
 * ```
 */
export function* stablePorts(): Generator<number> {
  const first = ephemeralRangeStart();
  if (first === undefined || first - LOWEST_PICKED_PORT < 1_000) return;
  for (let i = 0; i < PORT_TRIES; i++) yield LOWEST_PICKED_PORT + Math.floor(Math.random() * (first - LOWEST_PICKED_PORT));
}

// The first port of the ephemeral range on Linux, or undefined elsewhere.
function ephemeralRangeStart(): number | undefined {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : undefined;
  } catch {
    return undefined;
  }
}
