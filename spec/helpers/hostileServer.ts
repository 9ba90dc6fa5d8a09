import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { pools } from '../../src/transport/pool.js';
import { waitFor } from './waitFor.js';

/** What a hostile server does with one request; `res.socket` is there to cut it rudely. */
export type HostileHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** A raw `node:http` server on 127.0.0.1 that answers what no real API server would (hostile headers and bodies). */
export interface HostileServer {
  /** A kubeconfig whose cluster is this server (plain http, no user). */
  kubeConfig(): KubeConfig;
  /** Requests received so far. */
  readonly requests: number;
  /** Connections open now. */
  readonly open: number;
  /** Replaces the handler for the requests that follow. */
  handle(handler: HostileHandler): void;
  close(): Promise<void>;
}

/**
 * Starts a server on an ephemeral loopback port. A handler that throws or rejects destroys the response, so a
 * mistake in a spec shows as a cut body rather than a hang.
 */
export async function startHostileServer(handler: HostileHandler): Promise<HostileServer> {
  let current = handler;
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    requests++;
    res.on('error', () => undefined);
    Promise.resolve()
      .then(() => current(req, res))
      .catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'hostile', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'nobody' }],
        contexts: [{ name: 'hostile', cluster: 'hostile', user: 'nobody' }],
        currentContext: 'hostile',
      });
      return kc;
    },
    get requests() {
      return requests;
    },
    get open() {
      return sockets.size;
    },
    handle(next) {
      current = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Writes `chunk` and waits for the socket to take it, so a generator of endless bytes follows the client's pace. */
export function write(res: ServerResponse, chunk: Buffer | string): Promise<void> {
  if (res.destroyed) return Promise.reject(new Error('the client went away'));
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    res.once('drain', resolve);
    res.once('close', () => reject(new Error('the client went away')));
  });
}

/**
 * Every socket of `s` and every connection pool closed, and a few turns later
 * still nothing in `unhandled` (from `trapUnhandled`): a destroyed or
 * abandoned body had a listener.
 */
export async function settled(s: HostileServer, unhandled: readonly unknown[]): Promise<void> {
  await waitFor(() => s.open === 0 && pools.size === 0, 'every connection and pool to close');
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled).toEqual([]);
}
