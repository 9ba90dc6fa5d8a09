import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatBindAddress, type BindAddress } from './bindAddress.js';

/** A route's answer. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** A listening server. */
export interface Listening {
  readonly port: number;
  /** Where a client on this host reaches it. */
  readonly url: string;
  /** Stops listening, ends open connections, resolves once closed. */
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=utf-8';

/**
 * Serves `routes` (path → answer) over plain HTTP at `at`: GET and HEAD only,
 * 404 for other paths. What a route throws becomes a 500 naming the error.
 *
 * @returns the server once it listens; rejects with the listen error (an address in use) naming `what` and the address.
 */
export function listen(what: string, at: BindAddress, routes: Readonly<Record<string, () => Promise<Answer> | Answer>>): Promise<Listening> {
  const server = createServer((req, res) => void answer(req, res, routes));
  // A probe that hangs must not hold a connection (or the shutdown) forever.
  server.requestTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`manager: the ${what} server cannot listen on ${formatBindAddress(at)}: ${err.message}`, { cause: err })));
    server.listen({ port: at.port, ...(at.host !== undefined && { host: at.host }) }, () => {
      const { port } = server.address() as AddressInfo;
      const host = at.host === undefined || at.host === '0.0.0.0' || at.host === '::' ? '127.0.0.1' : at.host;
      resolve({
        port,
        url: `http://${formatBindAddress({ host, port })}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

async function answer(req: IncomingMessage, res: ServerResponse, routes: Readonly<Record<string, () => Promise<Answer> | Answer>>): Promise<void> {
  let a: Answer;
  const path = new URL(req.url ?? '/', 'http://probe').pathname;
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD') a = { status: 405, contentType: TEXT, body: `${req.method ?? ''} is not served; use GET\n` };
  else if (route === undefined) a = { status: 404, contentType: TEXT, body: `no ${path} here; served: ${Object.keys(routes).join(', ')}\n` };
  else {
    try {
      a = await route();
    } catch (err) {
      a = { status: 500, contentType: TEXT, body: `${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n` };
    }
  }
  res.writeHead(a.status, { 'content-type': a.contentType, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : a.body);
}

export { TEXT };
