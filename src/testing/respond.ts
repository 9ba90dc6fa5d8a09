import type { ServerResponse } from 'node:http';
import { resetSocket, type Sink } from './sink.js';
import type { Status, StatusError } from './status.js';

/** How a response body is cut short, by a cut fault armed for a named non-watch verb. */
export type Cut = 'reset' | 'end' | undefined;

/**
 * Writes a complete JSON response, or half of it when a cut fault took the
 * request: `reset` then resets the socket, `end` ends a chunked response
 * cleanly (the client sees a well-formed but truncated body).
 */
export function sendJson(res: ServerResponse, sink: Sink, code: number, body: string, cut: Cut = undefined): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' };
  if (cut !== 'end') headers['Content-Length'] = Buffer.byteLength(body);
  res.writeHead(code, headers);
  if (cut !== undefined) {
    const bytes = Buffer.from(body);
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
