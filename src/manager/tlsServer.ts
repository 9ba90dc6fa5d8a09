import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Observable, Subscription } from 'rxjs';
import { printable } from '../errors/printable.js';
import { reportError } from '../errors/reportError.js';
import type { BindAddress } from './bindAddress.js';
import type { TlsPair } from './certificates/tlsPair.js';
import { ConnectionCap } from './connections.js';
import type { ServerLimits } from './serverLimits.js';
import { bind, guard, serverOptions, type Listening } from './servers.js';

/**
 * The TLS settings every HTTPS server of the runner uses: TLS 1.2 at least (what kube-apiserver and Go's
 * crypto/tls clients speak), and HTTP/1.1 only through ALPN. controller-runtime turns HTTP/2 off on its
 * webhook and metrics servers by default since the HTTP/2 rapid-reset attack (CVE-2023-44487) let one
 * connection cost the server without bound; Node's `https` module serves HTTP/1.1 alone anyway.
 */
export const TLS_OPTIONS = { minVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] } as const;

/**
 * Serves `pairs` over TLS: the first pair before listening, each later one to new connections
 * (`setSecureContext`), so a rewritten certificate is served without a restart. A pair Node cannot use is
 * reported and the one before kept. The subscription ends when the server closes.
 *
 * @returns the server listening; rejects when `pairs` errors or completes before its first pair, or the listen fails.
 */
export function listenTls(
  what: string,
  at: BindAddress,
  pairs: Observable<TlsPair>,
  limits: ServerLimits,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Listening> {
  return new Promise<Listening>((resolve, reject) => {
    let server: Server | undefined;
    let subscription: Subscription | undefined = undefined;
    let settled = false;
    const fail = (err: Error): void => {
      settled = true;
      subscription?.unsubscribe();
      reject(err);
    };
    subscription = pairs.subscribe({
      next: (pair) => {
        if (server !== undefined) {
          try {
            server.setSecureContext({ ...TLS_OPTIONS, cert: pair.cert, key: pair.key });
          } catch (err) {
            reportError(new Error(`manager: the ${what} server keeps its certificate: the new pair cannot be used: ${printable((err as Error).message)}`, { cause: err }));
          }
          return;
        }
        try {
          server = createServer({ ...serverOptions(limits), ...TLS_OPTIONS, handshakeTimeout: limits.headersTimeoutMs, cert: pair.cert, key: pair.key }, handler);
        } catch (err) {
          fail(new Error(`manager: the ${what} server cannot use its certificate: ${printable((err as Error).message)}`, { cause: err }));
          return;
        }
        const cap = new ConnectionCap(limits.maxConnections);
        guard(server, cap, limits);
        server.on('request', (req: IncomingMessage, res: ServerResponse) => cap.answering(req, res));
        // A handshake that fails (not TLS, an old version, a client that gives up) ends that connection only.
        server.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());
        bind(server, what, at, 'https', cap).then(
          (listening) => {
            // The pairs failed while it was binding: the promise has rejected, so nobody else would ever close it (WH-87).
            if (settled) {
              void listening.close();
              return;
            }
            settled = true;
            resolve({
              ...listening,
              close: async () => {
                subscription?.unsubscribe();
                await listening.close();
              },
            });
          },
          (err: Error) => fail(err),
        );
      },
      error: (err: unknown) => {
        if (!settled) fail(err instanceof Error ? err : new Error(String(err)));
        else reportError(new Error(`manager: the ${what} server's certificates stopped updating: ${printable(String((err as Error)?.message ?? err))}`, { cause: err }));
      },
      complete: () => {
        if (server === undefined && !settled) fail(new Error(`manager: the ${what} server was given no certificate`));
      },
    });
    if (settled) subscription.unsubscribe();
  });
}

