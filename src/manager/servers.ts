import { createServer, STATUS_CODES, type IncomingMessage, type Server as HttpServer, type ServerOptions as HttpServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Observable, Subscription } from 'rxjs';
import { reportError } from '../errors/reportError.js';
import { formatBindAddress, type BindAddress } from './bindAddress.js';
import type { TlsPair } from './certificates/tlsPair.js';
import { ConnectionCap } from './connections.js';
import { printable } from '../errors/printable.js';
import { parseRequestTarget, type RequestTarget } from './requestTarget.js';
import type { ServerLimits } from './serverLimits.js';

/** A route's answer. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  /** More response headers (`WWW-Authenticate` on a 401). @default {} */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A route: the answer to a GET of its path, given the request's path and query, the request (for its headers), and
 * a signal that aborts once its answer is no longer awaited (the client left, or `answerTimeoutMs` passed).
 */
export type Route = (target: RequestTarget, req: IncomingMessage, signal: AbortSignal) => Promise<Answer> | Answer;

/** A listening server. */
export interface Listening {
  /** The address the socket is bound to, as the system reports it: `::` or `0.0.0.0` is every interface. */
  readonly address: string;
  readonly port: number;
  /** Where a client on this host reaches it (loopback when bound to every interface). */
  readonly url: string;
  /** Stops listening, ends open connections, resolves once closed. */
  close(): Promise<void>;
}

export const TEXT = 'text/plain; charset=utf-8';
const ignore = (): void => undefined;
const text = (status: number, body: string): Answer => ({ status, contentType: TEXT, body });

/**
 * Serves `routes` (path → answer) at `at`, over plain HTTP or, given `pairs`, over TLS ({@link listenTls}): GET and
 * HEAD only, 400 for a malformed request-target, 405 for other methods, 404 for other paths, within `limits`
 * (HI-1…HI-7). What a route throws becomes a 500 naming the error, a route slower than `answerTimeoutMs` a 503;
 * nothing a client sends or does rejects or throws out of here.
 *
 * @returns the server once it listens; rejects with the listen error (an address in use) naming `what` and the address.
 */
export function listen(what: string, at: BindAddress, routes: Readonly<Record<string, Route>>, limits: ServerLimits, pairs?: Observable<TlsPair>): Promise<Listening> {
  const answer = (req: IncomingMessage, res: ServerResponse): void => void serve(req, res, routes, limits.answerTimeoutMs).catch((err: unknown) => abandon(res, what, err));
  if (pairs !== undefined) return listenTls(what, at, pairs, limits, answer);
  return bind(createServer(serverOptions(limits), oneAtATime(answer)), what, at, 'http', limits);
}

/** The bounds Node's HTTP parser enforces itself (HI-5, HI-6), the same for every server of the runner. */
function serverOptions(limits: ServerLimits): HttpServerOptions {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often Node looks for requests past those two timeouts; its default (30 s) would let them run that much longer.
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
  };
}

/**
 * `handler` for one request of a connection at a time (HI-4): Node hands over every pipelined request it parsed at
 * once, so a request behind another waits until the answer before it closed, and is dropped if its client left meanwhile.
 */
function oneAtATime(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  // Per connection with a request being answered, the requests waiting behind it.
  const waiting = new WeakMap<Socket, (() => void)[]>();
  return (req, res) => {
    const socket = req.socket;
    const next = (): void => {
      const run = waiting.get(socket)?.shift();
      if (run === undefined) waiting.delete(socket);
      else run();
    };
    const run = (): void => {
      if (res.destroyed) return next();
      res.once('close', next);
      handler(req, res);
    };
    const queue = waiting.get(socket);
    if (queue === undefined) {
      waiting.set(socket, []);
      run();
    } else queue.push(run);
  };
}

/**
 * Listens on `at` within the connection cap (HI-4), the idle timeout and the answer to a request the parser refused;
 * on a TLS server the cap counts TCP connections, so handshakes in progress are counted too. Rejects with the listen
 * error naming `what` and the address, and reports (never throws) what goes wrong once listening. Closing ends every
 * connection the cap holds.
 */
function bind(server: HttpServer | HttpsServer, what: string, at: BindAddress, scheme: 'http' | 'https', limits: ServerLimits): Promise<Listening> {
  const cap = new ConnectionCap(limits.maxConnections);
  server.timeout = limits.idleTimeoutMs;
  server.on('connection', (socket: Socket) => cap.admit(socket));
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // A client that goes away mid-answer makes these emit; with no listener, an 'error' would be thrown. What it
    // means for the answer is decided where the answer is made.
    req.on('error', ignore);
    res.on('error', ignore);
    cap.answering(req, res);
  });
  server.on('clientError', refuse);
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`manager: the ${what} server cannot listen on ${formatBindAddress(at)}: ${err.message}`, { cause: err })));
    server.listen({ port: at.port, ...(at.host !== undefined && { host: at.host }) }, () => {
      // Once listening, an error (accept failing when the process is out of descriptors) is reported, never thrown.
      server.removeAllListeners('error');
      server.on('error', (err) => reportError(new Error(`manager: the ${what} server on ${formatBindAddress(at)}: ${err.message}`, { cause: err })));
      const { address, port } = server.address() as AddressInfo;
      const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : (at.host ?? address);
      resolve({
        address,
        port,
        url: `${scheme}://${formatBindAddress({ host, port })}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
            // A TLS handshake under way, or a TCP connection that never sent a byte, is no HTTP connection yet (WH-86).
            cap.destroyAll();
          }),
      });
    });
  });
}

async function serve(req: IncomingMessage, res: ServerResponse, routes: Readonly<Record<string, Route>>, answerTimeoutMs: number): Promise<void> {
  const target = parseRequestTarget(req.url ?? '');
  const route = target !== undefined && Object.hasOwn(routes, target.path) ? routes[target.path] : undefined;
  let a: Answer;
  if (target === undefined) a = text(400, 'malformed request-target: expected an absolute path such as /healthz\n');
  else if (req.method !== 'GET' && req.method !== 'HEAD') a = text(405, 'only GET and HEAD are served\n');
  else if (route === undefined) a = text(404, `not found; served: ${Object.keys(routes).join(', ')}\n`);
  else {
    const threw = (err: unknown): Answer => text(500, `${printable(err instanceof Error ? `${err.name}: ${err.message}` : String(err))}\n`);
    a = await answerWithin(res, answerTimeoutMs, (signal) => route(target, req, signal), text(503, `no answer within ${answerTimeoutMs} ms\n`), threw, text(499, ''));
  }
  // A body nobody reads is not drained for a next request on the same connection: the connection ends with the answer.
  const unread = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  writeAnswer(res, a, 'GET, HEAD', unread, req.method === 'HEAD');
}

/**
 * What `work` answers, given a signal that aborts when the client leaves or after `ms` (a TimeoutError, WH-12): `late`
 * once `ms` passed, `threw(err)` for what it throws or rejects with, and `left`, when given, once the client leaves.
 */
export function answerWithin<A>(res: ServerResponse, ms: number, work: (signal: AbortSignal) => A | Promise<A>, late: A, threw: (err: unknown) => A, left?: A): Promise<A> {
  return new Promise<A>((resolve) => {
    const abort = new AbortController();
    // The first of the answer, a throw or rejection, the deadline and (with `left`) the client leaving settles.
    let settled = false;
    const settle = (answer: A): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      res.off('close', gone);
      resolve(answer);
    };
    const gone = (): void => {
      abort.abort(new Error('the client left'));
      if (left !== undefined) settle(left);
    };
    const timer = setTimeout(() => {
      abort.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'));
      settle(late);
    }, ms);
    res.once('close', gone);
    try {
      Promise.resolve(work(abort.signal)).then(settle, (err: unknown) => settle(threw(err)));
    } catch (err) {
      settle(threw(err));
    }
  });
}

/**
 * Writes `a` unless the response is gone or written already: never cached nor sniffed, `Allow: allow` on a 405,
 * `Connection: close` when `close`, and without its body when `head`.
 */
export function writeAnswer(res: ServerResponse, a: Answer, allow: string, close: boolean, head = false): void {
  if (res.destroyed || res.writableEnded || res.headersSent) return;
  res.writeHead(a.status, {
    'content-type': a.contentType,
    'content-length': Buffer.byteLength(a.body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...(a.status === 405 && { allow }),
    ...a.headers,
    ...(close && { connection: 'close' }),
  });
  res.end(head ? undefined : a.body);
}

/** Something unforeseen broke an answer: the connection is dropped and the error reported, nothing thrown. */
export function abandon(res: ServerResponse, what: string, err: unknown): void {
  try {
    res.destroy();
  } catch {
    // Already gone.
  }
  reportError(new Error(`manager: the ${what} server could not answer a request: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
}

/** A request Node's parser refused (malformed, too large, too slow, or a reset): a bare status when nothing was written yet, then the connection ends. */
function refuse(err: NodeJS.ErrnoException, socket: Socket): void {
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  try {
    if (err.code !== 'ECONNRESET' && socket.writable && socket.bytesWritten === 0) {
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    }
  } finally {
    socket.destroy();
  }
}

/**
 * The TLS settings every HTTPS server of the runner uses: TLS 1.2 at least (what kube-apiserver and Go's
 * crypto/tls clients speak), and HTTP/1.1 only through ALPN. controller-runtime turns HTTP/2 off on its
 * webhook and metrics servers by default since the HTTP/2 rapid-reset attack (CVE-2023-44487) let one
 * connection cost the server without bound; Node's `https` module serves HTTP/1.1 alone anyway.
 */
const TLS_OPTIONS = { minVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] } as const;

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
    let server: HttpsServer | undefined;
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
          server = createHttpsServer({ ...serverOptions(limits), ...TLS_OPTIONS, handshakeTimeout: limits.headersTimeoutMs, cert: pair.cert, key: pair.key }, oneAtATime(handler));
        } catch (err) {
          fail(new Error(`manager: the ${what} server cannot use its certificate: ${printable((err as Error).message)}`, { cause: err }));
          return;
        }
        // A handshake that fails (not TLS, an old version, a client that gives up) ends that connection only.
        server.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());
        bind(server, what, at, 'https', limits).then(
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

