import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * At most `max` open connections on one server. A connection beyond the cap pushes out the oldest one
 * that has no answer in flight (an idle keep-alive, a client still sending or never sending its headers or its body),
 * so a probe that comes in after hundreds of idle connections is still answered; only when every open
 * connection is being answered is the new one refused. Without a cap, idle connections use up the
 * process's file descriptors and the kubelet's probe is accepted and dropped by the kernel's backlog.
 */
export class ConnectionCap {
  readonly #max: number;
  // Open connections, oldest first (a Map keeps insertion order), each with how many answers it has in flight.
  readonly #open = new Map<Socket, number>();
  // The same connections by their peer's address and port: a TLS server answers on a TLSSocket wrapping the TCP socket
  // it admitted, and the TCP socket is found again by the peer they share (unique among open connections).
  readonly #byPeer = new Map<string, Socket>();
  // A TLS socket's TCP socket once found, so each request on a keep-alive connection does not look it up again.
  readonly #under = new WeakMap<Socket, Socket>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a new connection in, making room for it, or destroys it when every open one is busy. */
  admit(socket: Socket): void {
    if (this.#open.size >= this.#max) {
      const idle = this.#oldestIdle();
      if (idle === undefined) {
        socket.destroy();
        return;
      }
      this.#open.delete(idle);
      idle.destroy();
    }
    this.#open.set(socket, 0);
    const peer = peerOf(socket);
    if (peer !== undefined) this.#byPeer.set(peer, socket);
    socket.once('close', () => {
      this.#open.delete(socket);
      if (peer !== undefined && this.#byPeer.get(peer) === socket) this.#byPeer.delete(peer);
    });
  }

  /**
   * Counts an answer in flight on the connection of `req` (the admitted socket, or a TLS socket over it) until `res`
   * closes (sent or abandoned). A request with a body counts only once its body was read (WH-85): a client still
   * sending one holds no answer yet, and a slow upload would otherwise keep its connection from being pushed out.
   */
  answering(req: IncomingMessage, res: ServerResponse): void {
    const socket = this.#admitted(req.socket);
    if (socket === undefined) return;
    let counted = false;
    const count = (): void => {
      const busy = this.#open.get(socket);
      if (busy === undefined) return;
      this.#open.set(socket, busy + 1);
      counted = true;
    };
    const awaitsBody = hasBody(req) && !req.complete;
    if (awaitsBody) req.once('end', count);
    else count();
    // One listener for both: the answer ends its count, or, if its body never ended, stops waiting for it.
    res.once('close', () => {
      if (counted) {
        const now = this.#open.get(socket);
        if (now !== undefined) this.#open.set(socket, Math.max(0, now - 1));
      } else if (awaitsBody) req.off('end', count);
    });
  }

  /** The open connection a request came on: its socket, or the TCP socket under its TLS socket; undefined once closed. */
  #admitted(answeringOn: Socket): Socket | undefined {
    if (this.#open.has(answeringOn)) return answeringOn;
    let socket = this.#under.get(answeringOn);
    if (socket === undefined) {
      const peer = peerOf(answeringOn);
      socket = peer === undefined ? undefined : this.#byPeer.get(peer);
      if (socket === undefined) return undefined;
      this.#under.set(answeringOn, socket);
    }
    return this.#open.has(socket) ? socket : undefined;
  }

  /**
   * Ends every open connection, answering or not: those still in their TLS handshake and raw TCP connections that
   * never sent a byte too, which the HTTP server's own `closeAllConnections` does not know of (WH-86).
   */
  destroyAll(): void {
    for (const socket of [...this.#open.keys()]) socket.destroy();
  }

  #oldestIdle(): Socket | undefined {
    for (const [socket, busy] of this.#open) if (busy === 0) return socket;
    return undefined;
  }
}

/** Whether the request announced a body (a length other than 0, or a transfer coding). */
const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

const peerOf = (socket: Socket): string | undefined =>
  socket.remoteAddress === undefined || socket.remotePort === undefined ? undefined : `${socket.remoteAddress}|${socket.remotePort}`;
