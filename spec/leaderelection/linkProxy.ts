import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

/** A TCP forwarder standing for one replica's network link: it can be cut, and it can delay every chunk. */
export interface LinkProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Resets every open connection and refuses new ones until heal(). */
  cut(): void;
  heal(): void;
  /** Milliseconds each chunk is held, drawn per chunk; order is kept. */
  setDelay(delay: () => number): void;
  close(): Promise<void>;
}

/** Starts a proxy to 127.0.0.1:`targetPort`. */
export async function startLinkProxy(targetPort: number): Promise<LinkProxy> {
  const open = new Set<Socket>();
  let severed = false;
  let delay: () => number = () => 0;
  const pipe = (from: Socket, to: Socket): void => {
    // The time the last chunk leaves, so a short delay drawn after a long one does not reorder bytes.
    let last = 0;
    from.on('data', (chunk: Buffer) => {
      const d = delay();
      if (d <= 0 && last <= Date.now()) {
        if (!to.destroyed) to.write(chunk);
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
    if (severed) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    pipe(client, upstream);
    pipe(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('linkProxy: no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut: () => {
      severed = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    heal: () => {
      severed = false;
    },
    setDelay: (d) => {
      delay = d;
    },
    close: async () => {
      for (const s of open) s.destroy();
      open.clear();
      server.close();
      await once(server, 'close');
    },
  };
}
