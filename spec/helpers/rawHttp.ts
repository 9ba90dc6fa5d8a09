import { connect } from 'node:net';

/** How a raw exchange ends on the client's side. */
export type RawEnding =
  /** Half-close after the last chunk (the request is all there is) and read until the server closes. */
  | 'end'
  /** Destroy the socket right after the last chunk, reading nothing: an early abort. */
  | 'abort'
  /** Keep the socket open until the server answers `stopAfter` bytes or closes. */
  | 'open';

/** What came back on one raw connection. */
export interface RawExchange {
  readonly received: Buffer;
  /** The server closed the connection (or reset it) before the client gave up. */
  readonly closed: boolean;
  /** The connection was refused or reset: no bytes are expected then. */
  readonly error: string | undefined;
}

/**
 * Opens a TCP connection to 127.0.0.1:`port`, writes `chunks` one after another (each its own write, so the
 * server's parser sees them split), ends as `ending` says, and collects what the server sends until it closes.
 * Bytes are sent exactly as given: this is how a spec sends what no HTTP client would. Gives up after
 * `timeoutMs`, returning what it had with `closed: false`.
 */
export function sendRaw(port: number, chunks: readonly (string | Buffer)[], ending: RawEnding, timeoutMs = 10_000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const parts: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const done = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(parts), closed, error });
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('data', (b: Buffer) => parts.push(b));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => done(true));
    socket.once('connect', () => {
      for (const c of chunks) socket.write(c);
      if (ending === 'end') socket.end();
      else if (ending === 'abort') {
        socket.destroy();
        done(true);
      }
    });
  });
}

/** One HTTP response read off the wire. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Reads the HTTP/1.x responses in `bytes`, in order, strictly: a status line, headers, then a body of
 * `content-length` bytes, or chunked, or (with neither) the rest of the stream; an interim 1xx has none.
 * `heads[i]` says whether the i-th final response answers a HEAD (no body); `'guess'` takes a response for
 * one when its body would be missing or would be the next status line, for callers that sent bytes whose
 * method they cannot know. Throws, naming what is wrong, on anything that is not a well-formed response, so
 * a caller can assert that what came back is HTTP.
 */
export function parseResponses(bytes: Buffer, heads: readonly boolean[] | 'guess' = []): RawResponse[] {
  const text = bytes.toString('latin1');
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd < 0) throw new Error(`a response without the end of its headers at byte ${at}: ${JSON.stringify(text.slice(at, at + 80))}`);
    const [statusLine = '', ...headerLines] = text.slice(at, headEnd).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) [^\r\n]*$/.exec(statusLine);
    if (m === null) throw new Error(`not a status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error(`not a header line: ${JSON.stringify(line.slice(0, 80))}`);
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    at = headEnd + 4;
    const status = Number(m[1]);
    const length = headers['content-length'];
    const finals = responses.filter((r) => r.status >= 200).length;
    const head = heads === 'guess' ? length !== undefined && length !== '0' && (at === text.length || text.startsWith('HTTP/1.', at)) : (heads[finals] ?? false);
    let body = '';
    if (head || status < 200) body = '';
    else if (length !== undefined) {
      if (!/^\d+$/.test(length)) throw new Error(`a content-length that is no number: ${JSON.stringify(length)}`);
      body = text.slice(at, at + Number(length));
      if (body.length < Number(length)) throw new Error(`a body of ${body.length} bytes where content-length says ${length}`);
      at += body.length;
    } else if (headers['transfer-encoding'] === 'chunked') {
      [body, at] = readChunked(text, at);
    } else {
      body = text.slice(at);
      at = text.length;
    }
    responses.push({ status, headers, body });
  }
  return responses;
}

/** A chunked body starting at `at`: its bytes and where the next response starts. */
function readChunked(text: string, at: number): [string, number] {
  let body = '';
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    const size = lineEnd < 0 ? '' : text.slice(at, lineEnd);
    if (!/^[0-9a-fA-F]+$/.test(size)) throw new Error(`not a chunk size: ${JSON.stringify(size.slice(0, 20))}`);
    const n = parseInt(size, 16);
    at = lineEnd + 2;
    if (n === 0) {
      if (text.slice(at, at + 2) !== '\r\n') throw new Error('a chunked body without its last CRLF');
      return [body, at + 2];
    }
    if (text.length < at + n + 2 || text.slice(at + n, at + n + 2) !== '\r\n') throw new Error('a chunk cut short');
    body += text.slice(at, at + n);
    at += n + 2;
  }
}
