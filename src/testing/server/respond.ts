import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { gzip } from 'node:zlib';
import { resetSocket, type Sink } from './sink.js';
import type { Status, StatusError } from './status.js';

/** How a response body is cut short, by a cut fault armed for a named non-watch verb. */
export type Cut = 'reset' | 'end' | undefined;

/** kube-apiserver compresses a response only when its body is larger than this (`defaultGzipThresholdBytes`). */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/**
 * Whether a request's `Accept-Encoding` lists gzip, read as kube-apiserver
 * does: any comma-separated token that is exactly `gzip`, whatever its
 * q-value.
 */
export function acceptsGzip(headers: IncomingHttpHeaders): boolean {
  const header = headers['accept-encoding'];
  if (header === undefined) return false;
  return (Array.isArray(header) ? header.join(',') : header).split(',').some((token) => token.split(';')[0]?.trim() === 'gzip');
}

/**
 * Writes a complete JSON response, or half of it when a cut fault took the
 * request: `reset` then resets the socket, `end` ends a chunked response
 * cleanly (the client sees a well-formed but truncated body).
 *
 * With `compress` (the client accepts gzip and the server compresses), a
 * body larger than 128 KiB goes out gzipped at level 1, as kube-apiserver
 * sends it (`Content-Encoding: gzip`, `Vary: Accept-Encoding`, chunked); the
 * compression runs on libuv's thread pool. A cut then halves the
 * compressed bytes.
 */
export function sendJson(res: ServerResponse, sink: Sink, code: number, body: string, cut: Cut = undefined, compress = false): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' };
  if (!compress || Buffer.byteLength(body) <= GZIP_THRESHOLD_BYTES) {
    if (cut !== 'end') headers['Content-Length'] = Buffer.byteLength(body);
    res.writeHead(code, headers);
    writeBody(res, sink, body, cut);
    return;
  }
  gzip(body, { level: 1 }, (err, compressed) => {
    if (res.headersSent || res.destroyed) return;
    if (err !== null) {
      res.destroy(err);
      return;
    }
    res.writeHead(code, { ...headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
    writeBody(res, sink, compressed, cut);
  });
}

function writeBody(res: ServerResponse, sink: Sink, body: string | Buffer, cut: Cut): void {
  if (cut !== undefined) {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const half = bytes.subarray(0, Math.max(1, bytes.length >> 1));
    if (cut === 'reset') res.write(half, () => resetSocket(res));
    else res.end(half);
    return;
  }
  sink.write(body);
  sink.end();
}

/** Writes a Status error, with `Retry-After` when it carries retry advice. */
export function sendStatus(res: ServerResponse, sink: Sink, err: StatusError): void {
  const retry = err.status.details?.retryAfterSeconds;
  if (retry !== undefined && !res.headersSent && (err.code === 429 || err.code === 503 || err.code === 504)) res.setHeader('Retry-After', String(retry));
  sendJson(res, sink, err.code, JSON.stringify(err.status satisfies Status));
}
