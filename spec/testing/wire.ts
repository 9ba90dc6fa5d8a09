import http from 'node:http';
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import { waitFor } from '../helpers/waitFor.js';

/** A decoded watch line, or the raw text of one that is not JSON. */
export type WireLine = { type: string; object: any } | { malformed: string };

export interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly token?: string;
  readonly ca?: string;
  /** The Accept header. @default 'application/json' */
  readonly accept?: string;
  /** The Accept-Encoding header; a gzip answer is inflated into `text`. @default undefined (none sent) */
  readonly acceptEncoding?: string;
}

export interface WireResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  readonly json: any;
  /** Bytes of the body as it came over the wire (compressed, when it was). */
  readonly wireBytes: number;
}

function agentFor(url: string, ca: string | undefined): { mod: typeof http | typeof https; options: https.RequestOptions } {
  const u = new URL(url);
  const base: https.RequestOptions = { hostname: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, agent: false };
  if (u.protocol === 'https:') return { mod: https, options: { ...base, ca } };
  return { mod: http, options: base };
}

/** One plain HTTP request on a fresh connection (no keep-alive pool left behind). */
export function request(url: string, opts: RequestOptions = {}): Promise<WireResponse> {
  const { mod, options } = agentFor(url, opts.ca);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
    if (opts.token !== undefined) headers['Authorization'] = `Bearer ${opts.token}`;
    if (opts.acceptEncoding !== undefined) headers['Accept-Encoding'] = opts.acceptEncoding;
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const req = mod.request({ ...options, method: opts.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        let text: string;
        try {
          text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        } catch (err) {
          reject(err);
          return;
        }
        let json: any;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, wireBytes: raw.length });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A watch response read line by line straight off the socket. */
export class WireWatch {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly lines: WireLine[] = [];
  /** Raw bytes received, to check partial lines. */
  raw = '';
  /** How the response ended: 'end' (clean), 'error' (reset/aborted), or undefined while open. */
  ending: 'end' | 'error' | undefined;
  readonly #req: http.ClientRequest;
  #buffer = '';

  private constructor(req: http.ClientRequest, res: http.IncomingMessage) {
    this.#req = req;
    this.status = res.statusCode ?? 0;
    this.headers = res.headers;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.raw += chunk;
      this.#buffer += chunk;
      let nl: number;
      while ((nl = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        if (line === '') continue;
        try {
          this.lines.push(JSON.parse(line));
        } catch {
          this.lines.push({ malformed: line });
        }
      }
    });
    res.on('end', () => (this.ending ??= 'end'));
    res.on('error', () => (this.ending ??= 'error'));
    res.on('aborted', () => (this.ending ??= 'error'));
    res.on('close', () => {
      if (!res.complete) this.ending ??= 'error';
      this.ending ??= 'end';
    });
  }

  /** Opens a watch; resolves once the response headers are in. */
  static open(url: string, opts: { token?: string; ca?: string; accept?: string; acceptEncoding?: string } = {}): Promise<WireWatch> {
    const { mod, options } = agentFor(url, opts.ca);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Accept: opts.accept ?? 'application/json' };
      if (opts.token !== undefined) headers['Authorization'] = `Bearer ${opts.token}`;
      if (opts.acceptEncoding !== undefined) headers['Accept-Encoding'] = opts.acceptEncoding;
      const req = mod.request({ ...options, headers }, (res) => resolve(new WireWatch(req, res)));
      req.on('error', reject);
      req.end();
    });
  }

  /** Decoded events (malformed lines left out). */
  get events(): { type: string; object: any }[] {
    return this.lines.filter((l): l is { type: string; object: any } => !('malformed' in l));
  }

  /** Waits until at least `n` lines arrived. */
  async waitForLines(n: number, timeoutMs = 5_000): Promise<WireLine[]> {
    await waitFor(() => this.lines.length >= n, `${n} watch lines`, timeoutMs, { describe: () => `have ${this.lines.length}` });
    return this.lines;
  }

  /** Waits until the response ended one way or the other. */
  async waitForEnd(timeoutMs = 5_000): Promise<'end' | 'error'> {
    await waitFor(() => this.ending !== undefined, 'the watch to end', timeoutMs);
    return this.ending as 'end' | 'error';
  }

  close(): void {
    this.#req.destroy();
  }
}

/** The names of the objects in watch events. */
export function names(events: readonly { object: any }[]): string[] {
  return events.map((e) => e.object?.metadata?.name as string);
}
