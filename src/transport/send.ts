import type { IncomingHttpHeaders } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node';
import { request, type Dispatcher } from 'undici';
import { ConnectionError } from '../errors/api/ConnectionError.js';
import { DecodeError } from '../errors/api/DecodeError.js';
import { resolveRequest, type ResolvedRequest } from './connection.js';
import { CredentialFailure, untilAborted } from './credentialFailure.js';
import { transportOf } from './options.js';
import { pools } from './pool.js';
import { redactionOf } from './redaction.js';
import { bodyChunks } from './bodyChunks.js';
import type { Redact } from '../errors/api/wireText.js';

const USER_AGENT = 'rxkube';

/**
 * Inflated bytes a compressed body may reach whatever its ratio: a small body
 * of few distinct bytes (a list of near-identical objects) can inflate
 * several hundred times and costs nothing; the ratio is judged past this.
 */
export const INFLATION_FLOOR = 1024 * 1024;

/**
 * The size of each inflated chunk, where zlib's default is 16 KiB. Every
 * chunk is one round trip to zlib's worker thread, a stream read and a
 * decoder call: inflating and decoding a 23 MB list of pods took about a
 * fifth less time and CPU with 64 KiB chunks, in-process. Inflated bytes are
 * still handed on as soon as zlib has them; only a full chunk is larger.
 */
const INFLATE_CHUNK_BYTES = 64 * 1024;

/**
 * The listener every body stream gets as soon as it exists. A stream is
 * destroyed when its body is refused, abandoned or aborted, and undici's
 * body then emits an abort error: without a listener that error would end
 * the process. Whoever reads the stream sees its errors through the reader.
 */
const ignore = (): void => undefined;

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
  /** Hand an uncompressed body over one socket chunk at a time, never copied (`bodyChunks`, PF-48): for watches. */
  readonly chunkByChunk?: boolean | undefined;
}

/** An answer whose body is read as it streams in, inflated when the server compressed it. */
export interface TransportResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** Byte chunks of the body, inflated; iterate once. */
  readonly body: AsyncIterable<Buffer>;
  /** Drops whatever is left of the body and gives the connection back; call once done, whatever happened. */
  close(): void;
  /** Replaces the credential this request sent with `<redacted>` in text of the answer, before an error keeps it (HI-79). */
  readonly redact: Redact;
}

/**
 * Sends one request with the kubeconfig's credentials over the pool of its
 * connection target and answers as soon as the headers are in (internal).
 *
 * Credentials are resolved for this request alone; the connection is the
 * pool's (see `PoolRegistry`). With compression on, `Accept-Encoding: gzip`
 * is sent and a gzip or deflate answer is inflated chunk by chunk on
 * libuv's thread pool, so the body never exists whole, compressed or not,
 * and no further than `maxInflationRatio` allows (HI-25). Any other
 * encoding, whatever the status, is a `DecodeError` of code
 * `CONTENT_ENCODING` (HI-20); every body stream has an error listener from
 * birth, so a body dropped anywhere never reaches the process (HI-21).
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
    res.body.on('error', ignore);
    body = res.body;
    const redact = redactionOf(resolved.headers['authorization']);
    const encoding = encodingOf(res.headers['content-encoding'], what);
    if (encoding === undefined) return { statusCode: res.statusCode, headers: res.headers, body: req.chunkByChunk === true ? bodyChunks(res.body) : (res.body as AsyncIterable<Buffer>), close, redact };
    const zlib = encoding === 'deflate' ? createInflate({ chunkSize: INFLATE_CHUNK_BYTES }) : createGunzip({ chunkSize: INFLATE_CHUNK_BYTES });
    zlib.on('error', ignore);
    // pipeline carries an error of either side to the other, so the reader of `zlib` sees a socket error as its own.
    pipeline(res.body, zlib, ignore);
    body = zlib;
    return { statusCode: res.statusCode, headers: res.headers, body: inflate(zlib, encoding, what, transportOf(kc).maxInflationRatio), close, redact };
  } catch (err) {
    close();
    throw err;
  }
}

/**
 * The compression of an answer, from its `Content-Encoding`: `undefined` for
 * none (absent or `identity`), else gzip or deflate. `identity` entries in a
 * list are no encoding and are dropped; anything else (br, zstd, compress,
 * two encodings) was not asked for and is refused with a DecodeError whose
 * message names the encoding only when it is a plain token.
 */
function encodingOf(header: string | string[] | undefined, what: string): 'gzip' | 'deflate' | undefined {
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  const names = raw
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '' && n !== 'identity');
  if (names.length === 0) return undefined;
  if (names.length === 1 && (names[0] === 'gzip' || names[0] === 'x-gzip')) return 'gzip';
  if (names.length === 1 && names[0] === 'deflate') return 'deflate';
  const shown = /^[a-z0-9 ,._-]{1,64}$/.test(raw.trim().toLowerCase()) ? ` ${JSON.stringify(raw.trim().toLowerCase())}` : '';
  throw new DecodeError(`${what}: the server answered with a content-encoding${shown} rxkube did not ask for`, '', 0, { code: 'CONTENT_ENCODING' });
}

/**
 * The inflated chunks of `zlib`, refused once they pass `maxRatio` times the
 * compressed bytes consumed (`bytesWritten`) beyond {@link INFLATION_FLOOR}:
 * a bomb stops after about a MiB instead of filling memory. zlib's own
 * failures become DecodeErrors: a stream that ends early is `TRUNCATED`,
 * as the same body cut short uncompressed is for the decoders; bytes that
 * do not inflate are `CONTENT_ENCODING`. A socket error passes unchanged.
 */
async function* inflate(zlib: Gunzip | Inflate, encoding: string, what: string, maxRatio: number): AsyncGenerator<Buffer, void, undefined> {
  let inflated = 0;
  try {
    for await (const chunk of zlib as AsyncIterable<Buffer>) {
      inflated += chunk.length;
      if (inflated > INFLATION_FLOOR && inflated > maxRatio * zlib.bytesWritten) {
        throw new DecodeError(`${what}: the compressed body inflated more than maxInflationRatio (${maxRatio}) times its size`, '', inflated, { code: 'INFLATION_RATIO' });
      }
      yield chunk;
    }
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code !== 'string' || !code.startsWith('Z_')) throw err;
    if (code === 'Z_BUF_ERROR') throw new DecodeError(`${what}: the ${encoding} body ended before it was complete`, '', inflated, { code: 'TRUNCATED', cause: err });
    throw new DecodeError(`${what}: the body is not valid ${encoding}`, '', inflated, { code: 'CONTENT_ENCODING', cause: err });
  }
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
