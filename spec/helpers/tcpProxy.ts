import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP forwarder to a local port, standing for a network link the test controls: it counts connections and bytes
 * on the wire whatever the client's pooling does, can be cut (and healed), can hold every chunk for a while, and can
 * limit its bandwidth. TLS passes through untouched.
 */
export interface TcpProxy {
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number;
  /** Connections accepted so far, refused ones included. */
  readonly accepted: number;
  /** Client connections open now. */
  readonly open: number;
  /** Resets every open connection and refuses (resets) new ones until heal(). */
  cut(): void;
  /** Lets connections through again. */
  heal(): void;
  /**
   * Stops forwarding in both directions without closing anything, as a link that went dark (a dead NAT entry, a
   * peer that vanished) does: bytes wait unread until release(); new connections are held too.
   */
  hold(): void;
  /** Forwards what was held, and everything after. */
  release(): void;
  /** Bytes forwarded from the server to clients, and from clients to the server, so far. */
  readonly bytesToClients: number;
  readonly bytesToServer: number;
  /** Milliseconds each chunk is held, drawn per chunk; the order of bytes is kept. */
  setDelay(delay: () => number): void;
  /**
   * Limits each direction of each connection to `bytesPerSecond` (undefined: no limit), as a bottleneck link with a
   * 64 KiB buffer: a sender that outruns it is paused (TCP backpressure) until the buffer drains.
   */
  setRate(bytesPerSecond: number | undefined): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  let severed = false;
  let accepted = 0;
  let delay: () => number = () => 0;
  let rate: number | undefined;
  let held = false;
  const bytes = { toClients: 0, toServer: 0 };
  const LINK_BUFFER = 64 * 1024;
  /**
   * Forwards `from` to `to`; the answer runs a callback once every chunk held back so far has been written. Held
   * chunks wait in one queue per direction, sent in order by one timer: timers of their own could fire out of order
   * (a timer's start is the event loop's cached time, not the clock), and a reordered TLS byte stream breaks.
   */
  const forward = (from: Socket, to: Socket, direction: 'toClients' | 'toServer'): { afterFlush(then: () => void): void } => {
    const queue: { readonly chunk: Buffer; readonly at: number }[] = [];
    // When the last queued chunk leaves: a chunk never leaves before the one ahead of it.
    let last = 0;
    // Bytes queued for the rate-limited link, against its buffer.
    let queued = 0;
    let timer: NodeJS.Timeout | undefined;
    // What waits for the queue to empty: a peer that closed has its last bytes delivered first.
    let flushed: (() => void) | undefined;
    const pump = (): void => {
      timer = undefined;
      while (queue.length > 0 && (queue[0] as { at: number }).at <= Date.now()) {
        const { chunk } = queue.shift() as { chunk: Buffer };
        queued -= chunk.length;
        if (!to.destroyed) to.write(chunk);
      }
      if (queued <= LINK_BUFFER && from.isPaused() && !held) from.resume();
      const head = queue[0];
      if (head !== undefined) timer = setTimeout(pump, Math.max(1, head.at - Date.now()));
      else flushed?.();
    };
    from.on('data', (chunk: Buffer) => {
      bytes[direction] += chunk.length;
      const d = rate === undefined ? delay() : 0;
      if (rate === undefined && d <= 0 && queue.length === 0) {
        if (!to.destroyed && !to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
        return;
      }
      const at = rate === undefined ? Math.max(last, Date.now() + d) : Math.max(last, Date.now()) + (chunk.length * 1000) / rate;
      last = at;
      queue.push({ chunk, at });
      if (rate !== undefined) {
        queued += chunk.length;
        if (queued > LINK_BUFFER) from.pause();
      }
      timer ??= setTimeout(pump, Math.max(1, (queue[0] as { at: number }).at - Date.now()));
    });
    return {
      afterFlush(then) {
        if (queue.length === 0) then();
        else flushed = then;
      },
    };
  };
  const server = createServer((client) => {
    accepted++;
    if (severed) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(upstream);
    clients.add(client);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      clients.delete(client);
    };
    const toServer = forward(client, upstream, 'toServer');
    const toClient = forward(upstream, client, 'toClients');
    // An error is a reset: both go at once. A clean close first delivers what the link still holds, as a wire would.
    client.on('error', drop).on('close', () => toServer.afterFlush(drop));
    upstream.on('error', drop).on('close', () => toClient.afterFlush(drop));
    if (held) {
      client.pause();
      upstream.pause();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('tcpProxy: no port');
  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    get open() {
      return clients.size;
    },
    get bytesToClients() {
      return bytes.toClients;
    },
    get bytesToServer() {
      return bytes.toServer;
    },
    setRate: (bytesPerSecond) => {
      if (bytesPerSecond !== undefined && !(bytesPerSecond > 0)) throw new TypeError(`setRate: expected a positive number, got ${bytesPerSecond}`);
      rate = bytesPerSecond;
    },
    cut: () => {
      severed = true;
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
      clients.clear();
    },
    heal: () => {
      severed = false;
    },
    hold: () => {
      held = true;
      for (const socket of sockets) socket.pause();
    },
    release: () => {
      held = false;
      for (const socket of sockets) socket.resume();
    },
    setDelay: (d) => {
      delay = d;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      clients.clear();
      if (server.listening) {
        server.close();
        await once(server, 'close');
      }
    },
  };
}
