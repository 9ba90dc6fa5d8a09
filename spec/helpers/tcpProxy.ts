import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP forwarder to a local port, standing for a network link the test controls: it counts connections on the
 * wire whatever the client's pooling does, can be cut (and healed), and can hold every chunk for a while. TLS passes
 * through untouched.
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
  /** Milliseconds each chunk is held, drawn per chunk; the order of bytes is kept. */
  setDelay(delay: () => number): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort`. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  let severed = false;
  let accepted = 0;
  let delay: () => number = () => 0;
  const forward = (from: Socket, to: Socket): void => {
    // The time the last held chunk leaves, so a short delay drawn after a long one does not reorder bytes.
    let last = 0;
    from.on('data', (chunk: Buffer) => {
      const d = delay();
      if (d <= 0 && last <= Date.now()) {
        if (!to.destroyed && !to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
        return;
      }
      const at = Math.max(last, Date.now() + d);
      last = at;
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, at - Date.now());
    });
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
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    forward(client, upstream);
    forward(upstream, client);
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
    cut: () => {
      severed = true;
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
      clients.clear();
    },
    heal: () => {
      severed = false;
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
