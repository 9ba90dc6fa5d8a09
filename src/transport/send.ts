import type { IncomingHttpHeaders } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node';
import { request, type Dispatcher } from 'undici';
import { ConnectionError } from '../sources/errors/ConnectionError.js';
import { DecodeError } from '../sources/errors/DecodeError.js';
import { resolveRequest, type ResolvedRequest } from './connection.js';
import { CredentialFailure, untilAborted } from './credentialFailure.js';
import { transportOf } from './options.js';
import { pools } from './pool.js';

const USER_AGENT = 'rxkube';

/** One request through the process's connection pools (internal). */
export interface TransportRequest {
  readonly method: Dispatcher.HttpMethod;
  readonly url: string;
  /** `list v1/pods`: the start of every error message. */
  readonly what: string;
  readonly accept: string;
  readonly body?: string | undefined;
  readonly contentType?: string | undefined;
  /** Aborting it destroys the request (and an HTTP/1.1 socket) at once. */
  readonly signal: AbortSignal;
}

/** An answer whose body is read as it streams in, inflated when the server compressed it. */
export interface TransportResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** Byte chunks of the body, inflated; iterate once. */
  readonly body: AsyncIterable<Buffer>;
  /** Drops whatever is left of the body and gives the connection back; call once done, whatever happened. */
  close(): void;
}

/**
 * Sends one request with the kubeconfig's credentials over the pool of its
 * connection target and answers as soon as the headers are in (internal).
 *
 * Credentials are resolved for this request alone; the connection is the
 * pool's (see `PoolRegistry`). With compression on, `Accept-Encoding: gzip`
 * is sent and a gzip or deflate answer is inflated chunk by chunk on
 * libuv's thread pool, so the body never exists whole, compressed or not.
 * The caller maps transport errors (the signal's reason, credentials, the
 * socket) as it likes; a credential failure is a `ConnectionError` of code
 * `CREDENTIALS` whose cause carries no plugin output.
 */
export async function send(kc: KubeConfig, req: TransportRequest): Promise<TransportResponse> {
  const { signal, what } = req;
  const { resolved, lease } = await withCredentials(kc, req);
  let body: Readable | undefined;
  const close = (): void => {
    if (body !== undefined && !body.destroyed) body.destroy();
    lease.release();
  };
  try {
    signal.throwIfAborted();
    const compression = transportOf(kc).compression;
    const headers: Record<string, string> = { ...resolved.headers, accept: req.accept, 'user-agent': USER_AGENT };
    if (compression) headers['accept-encoding'] = 'gzip';
    if (req.body !== undefined) headers['content-type'] = req.contentType ?? 'application/json';
    const res = await request(req.url, {
      method: req.method,
      headers,
      body: req.body,
      dispatcher: lease.dispatcher,
      signal,
      // Callers keep their own clocks (an idle timer that pauses while the consumer holds a chunk, a whole-call timeout).
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    body = res.body;
    const decoded = inflated(res.body, res.headers['content-encoding'], what);
    if (decoded !== res.body) body = decoded;
    return { statusCode: res.statusCode, headers: res.headers, body: decoded as AsyncIterable<Buffer>, close };
  } catch (err) {
    close();
    throw err;
  }
}

/** The body as it must be read: inflated through a zlib stream for gzip and deflate, as it came otherwise. */
function inflated(body: Readable, encoding: string | string[] | undefined, what: string): Readable {
  const name = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase();
  if (name === '' || name === 'identity') return body;
  if (name !== 'gzip' && name !== 'x-gzip' && name !== 'deflate') {
    body.destroy();
    throw new DecodeError(`${what}: the server answered with content-encoding ${JSON.stringify(name)}, which rxkube did not ask for`, '', 0);
  }
  const zlib = name === 'deflate' ? createInflate() : createGunzip();
  // pipeline carries an error of either side to the other, so the reader of `zlib` sees a cut body as an error.
  pipeline(body, zlib, () => undefined);
  return zlib;
}

/**
 * What is kept of a credential plugin's failure: its class and code, never its
 * text. A plugin that prints a bare token instead of ExecCredential JSON would
 * otherwise leak it through the parser's message, and on a failed exit the
 * message is the plugin's stderr.
 */
function credentialFailure(cause: unknown): Error {
  const err = new Error(cause instanceof SyntaxError ? 'the exec plugin printed no valid ExecCredential JSON' : 'the credential plugin or provider failed');
  err.name = cause instanceof Error ? cause.name : 'Error';
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') Object.assign(err, { code });
  return err;
}

/**
 * Resolves the request's credentials and leases its pool, within
 * `credentialTimeoutMs` and the request's signal. Whatever ends the wait
 * early (the bound, the request's own deadline, an unsubscribe) abandons the
 * resolution, which kills an exec plugin nobody else waits for, and the
 * request fails with a `ConnectionError` of code `CREDENTIALS` saying so.
 */
async function withCredentials(kc: KubeConfig, req: TransportRequest): ReturnType<typeof pools.lease<ResolvedRequest>> {
  const { signal, what } = req;
  const timeoutMs = transportOf(kc).credentialTimeoutMs;
  const resolution = new AbortController();
  const onAbort = (): void => resolution.abort(new CredentialFailure('abandoned: the request was cancelled or ran out of time first'));
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  const timer = setTimeout(() => resolution.abort(new CredentialFailure(`no credential within ${timeoutMs} ms (credentialTimeoutMs); an exec plugin still running was stopped`)), timeoutMs);
  try {
    return await pools.lease(kc, () => untilAborted(resolveRequest(kc, req.url, resolution.signal), resolution.signal));
  } catch (cause) {
    if (cause instanceof CredentialFailure) throw new ConnectionError(`${what}: could not obtain credentials from the kubeconfig: ${cause.message}`, { code: 'CREDENTIALS', cause });
    // The message of an OIDC or other provider's failure is about the provider; only its class and code are kept.
    throw new ConnectionError(`${what}: could not obtain credentials from the kubeconfig`, { code: 'CREDENTIALS', cause: credentialFailure(cause) });
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
