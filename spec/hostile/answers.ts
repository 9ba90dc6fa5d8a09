import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import * as zlib from 'node:zlib';
import type { Behaviour } from './plan.js';

/**
 * The hostile answers: each writes one response as no real API server
 * would, on a raw `node:http` response or its socket. They share nothing
 * with the client they attack; they only know the wire format.
 */

/** What an answer needs from the server: the right answer it corrupts, and what it may reflect. */
export interface AnswerContext {
  /** The body a correct server would send (a list, an object, or watch lines). */
  readonly correct: Buffer;
  /** A valid object of the resource, to build events and items around. */
  readonly sample: Readonly<Record<string, unknown>>;
  readonly resourceVersion: string;
  /** The bearer token the request carried (echoed by one hostile error body). */
  readonly token: string;
  readonly isWatch: boolean;
  /** Aborted when the server closes: long answers stop. */
  readonly signal: AbortSignal;
}

const ESCAPES = '\u001b]0;pwned\u0007\u001b[2J\u001b]52;c;ZXZpbA==\u0007\u009b31m\r\u0000';
const MIB = 1024 * 1024;
/** Endless answers stop here even if the client never does, so a seed ends. */
const ENDLESS_CAP = 2048 * MIB;

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

function status(code: number, message: string, reason = 'InternalError'): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** Writes `chunk`, waiting for the socket to drain; false once the client is gone. */
async function write(res: ServerResponse, chunk: Buffer | string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  if (!res.write(chunk)) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }
  return !res.destroyed;
}

function encode(body: Buffer, encoding: string): { body: Buffer; header: string } {
  switch (encoding) {
    case 'br':
      return { body: zlib.brotliCompressSync(body), header: 'br' };
    case 'zstd': {
      const z = (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
      return { body: z !== undefined ? z(body) : Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), body]), header: 'zstd' };
    }
    case 'gzip, gzip':
      return { body: zlib.gzipSync(zlib.gzipSync(body)), header: 'gzip, gzip' };
    case 'gzip, identity':
      return { body: zlib.gzipSync(body), header: 'gzip, identity' };
    case 'gzip-but-garbage':
      return { body, header: 'gzip' };
    case 'deflate-but-gzip':
      return { body: zlib.gzipSync(body), header: 'deflate' };
    default:
      return { body, header: encoding };
  }
}

let bombBlock: Promise<Buffer> | undefined;
/** 256 MiB of spaces, gzipped once per process in 1 MiB steps so the server never holds the inflated form. */
function bomb(): Promise<Buffer> {
  bombBlock ??= (async () => {
    const gz = zlib.createGzip({ level: 9 });
    const out: Buffer[] = [];
    gz.on('data', (c: Buffer) => out.push(c));
    const spaces = Buffer.alloc(MIB, 0x20);
    for (let i = 0; i < 256; i++) if (!gz.write(spaces)) await once(gz, 'drain');
    gz.end();
    await once(gz, 'end');
    return Buffer.concat(out);
  })();
  return bombBlock;
}

/** Text around a payload that keeps it valid JSON of the target's shape: a list, a watch line, an object. */
function frame(ctx: AnswerContext, target: string): { head: string; tail: string } {
  const meta = ctx.sample['metadata'] as Record<string, unknown>;
  const obj = JSON.stringify({ ...ctx.sample, metadata: { ...meta, name: 'hostile' } }).slice(0, -1);
  if (target === 'list') return { head: `{"apiVersion":"fuzz.rxkube.io/v1","kind":"WidgetList","metadata":{"resourceVersion":"${ctx.resourceVersion}"},"items":[`, tail: ']}' };
  if (target === 'watch') return { head: `{"type":"MODIFIED","object":${obj},"x":"`, tail: '"}}\n' };
  return { head: `${obj},"x":"`, tail: '"}' };
}

function nested(depth: number, shape: string): string {
  return shape === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function wrongTypes(variant: string, ctx: AnswerContext, target: string): Buffer {
  const item = ctx.sample;
  const meta = item['metadata'] as Record<string, unknown>;
  const list = (items: unknown, metadata: unknown = { resourceVersion: ctx.resourceVersion }): Buffer =>
    json({ apiVersion: 'fuzz.rxkube.io/v1', kind: 'WidgetList', metadata, items });
  const one = (obj: unknown): Buffer => (target === 'watch' ? Buffer.from(`${JSON.stringify({ type: 'MODIFIED', object: obj })}\n`) : target === 'list' ? list([obj]) : json(obj));
  switch (variant) {
    case 'items-object':
      return target === 'list' ? list({}) : one({ ...item, metadata: {} });
    case 'items-scalars':
      return target === 'list' ? list([1, 'x', null, true]) : one(1);
    case 'metadata-string':
      return target === 'list' ? list([item], 'x') : one({ ...item, metadata: 'x' });
    case 'rv-number':
      return one({ ...item, metadata: { ...meta, resourceVersion: 12 } });
    case 'name-number':
      return one({ ...item, metadata: { ...meta, name: 42 } });
    case 'labels-array':
      return one({ ...item, metadata: { ...meta, labels: ['a', 'b'] } });
    case 'event-type-number':
      return target === 'watch' ? Buffer.from(`${JSON.stringify({ type: 5, object: item })}\n`) : one({ ...item, kind: 5 });
    case 'event-object-string':
      return target === 'watch' ? Buffer.from(`${JSON.stringify({ type: 'ADDED', object: 'x' })}\n`) : one('x');
    case 'body-array':
      return json([1, 2]);
    default:
      return Buffer.from('null');
  }
}

function escapes(where: string, ctx: AnswerContext, target: string): { code: number; body: Buffer } {
  const meta = ctx.sample['metadata'] as Record<string, unknown>;
  const obj =
    where === 'name'
      ? { ...ctx.sample, metadata: { ...meta, name: `evil${ESCAPES}` } }
      : { ...ctx.sample, metadata: { ...meta, annotations: { note: `hello${ESCAPES}` } } };
  if (where === 'status-message') return { code: 500, body: json(status(500, `overloaded${ESCAPES}`)) };
  if (target === 'watch') {
    const ev = where === 'error-event' ? { type: 'ERROR', object: status(500, `broken${ESCAPES}`) } : { type: 'MODIFIED', object: obj };
    return { code: 200, body: Buffer.from(`${JSON.stringify(ev)}\n`) };
  }
  if (target === 'list') return { code: 200, body: json({ apiVersion: 'fuzz.rxkube.io/v1', kind: 'WidgetList', metadata: { resourceVersion: ctx.resourceVersion }, items: [obj] }) };
  return { code: 200, body: json(obj) };
}

function errorBody(kind: string, code: number, ctx: AnswerContext): { type: string; body: Buffer } {
  switch (kind) {
    case 'html':
      return { type: 'text/html', body: Buffer.from(`<html><head><title>${code}</title></head><body><h1>Bad Gateway</h1><script>alert(1)</script></body></html>`) };
    case 'escapes':
      return { type: 'application/json', body: json(status(code, `denied${ESCAPES}`)) };
    case 'huge':
      return { type: 'text/plain', body: Buffer.alloc(10 * MIB, 0x78) };
    case 'status-wrong-types':
      return { type: 'application/json', body: json({ kind: 'Status', code: 'five hundred', message: { a: 1 }, reason: [1], details: 'x' }) };
    case 'invalid-utf8':
      return { type: 'application/json', body: Buffer.from([0x7b, 0xff, 0xfe, 0x80, 0x1b, 0x5b, 0x32, 0x4a, 0x00, 0x07, 0x7d]) };
    case 'echo-credential':
      return { type: 'application/json', body: json(status(code, `request rejected: Authorization: Bearer ${ctx.token}`)) };
    default:
      return { type: 'application/json', body: Buffer.alloc(0) };
  }
}

/** Writes raw bytes on the socket, bypassing the response (which is then never used). */
function raw(res: ServerResponse, text: string): Socket {
  const s = res.socket as Socket;
  s.write(text);
  return s;
}

/** Answers one request with `b`; resolves once the answer is over (or the client left). */
export async function answer(res: ServerResponse, b: Behaviour, ctx: AnswerContext): Promise<void> {
  const p = b.params;
  const target = b.target;
  const contentType = 'application/json';
  const plain = (code: number, body: Buffer, headers: Record<string, string> = {}): void => {
    res.writeHead(code, { 'content-type': contentType, ...headers });
    res.end(body);
  };
  switch (b.kind) {
    case 'correct':
      return plain(200, ctx.correct);
    case 'encoding': {
      const body = p['status'] === 403 ? json(status(403, 'widgets is forbidden', 'Forbidden')) : ctx.correct;
      const e = encode(body, String(p['encoding']));
      return plain(Number(p['status']), e.body, { 'content-encoding': e.header });
    }
    case 'gzip-bomb': {
      const block = await bomb();
      const { head, tail } = frame(ctx, target);
      res.writeHead(200, { 'content-type': contentType, 'content-encoding': 'gzip' });
      if (!(await write(res, zlib.gzipSync(head)))) return;
      for (let i = 0; i < Number(p['blocks']); i++) if (!(await write(res, block))) return;
      res.end(zlib.gzipSync(tail));
      return;
    }
    case 'endless-body': {
      const { head } = frame(ctx, target);
      const shape = String(p['shape']);
      res.writeHead(200, { 'content-type': contentType });
      const item = JSON.stringify(ctx.sample);
      const unit = Buffer.from(
        shape === 'whitespace' ? ' '.repeat(64 * 1024) : shape === 'items' ? `${item},`.repeat(64) : `${JSON.stringify({ type: 'MODIFIED', object: ctx.sample })}\n`.repeat(64),
      );
      if (shape !== 'events' && !(await write(res, head))) return;
      for (let sent = 0; sent < ENDLESS_CAP && !ctx.signal.aborted; sent += unit.length) if (!(await write(res, unit))) return;
      res.destroy();
      return;
    }
    case 'trickle': {
      const every = Number(p['everyMs']);
      const headers = `HTTP/1.1 200 OK\r\ncontent-type: ${contentType}\r\ncontent-length: ${ctx.correct.length}\r\n\r\n`;
      const bytes = p['headersFirst'] === 1 ? ctx.correct : Buffer.concat([Buffer.from(headers), ctx.correct]);
      if (p['headersFirst'] === 1) {
        res.writeHead(200, { 'content-type': contentType, 'content-length': String(ctx.correct.length) });
        res.flushHeaders();
      }
      const s = res.socket as Socket;
      for (let i = 0; i < bytes.length; i++) {
        if (s.destroyed || ctx.signal.aborted) return;
        if (p['headersFirst'] === 1) res.write(bytes.subarray(i, i + 1));
        else s.write(bytes.subarray(i, i + 1));
        await delay(every, undefined, { signal: ctx.signal }).catch(() => undefined);
      }
      if (p['headersFirst'] === 1) res.end();
      else s.end();
      return;
    }
    case 'long-line': {
      const { head, tail } = frame(ctx, target);
      res.writeHead(200, { 'content-type': contentType });
      const obj = `{"apiVersion":"fuzz.rxkube.io/v1","kind":"Widget","metadata":{"name":"long","namespace":"fuzz","resourceVersion":"${ctx.resourceVersion}"},"spec":{"x":"`;
      if (!(await write(res, target === 'list' ? `${head}${obj}` : head))) return;
      const chunk = Buffer.alloc(MIB, 0x61);
      for (let i = 0; i < Number(p['mib']); i++) if (!(await write(res, chunk))) return;
      res.end(target === 'list' ? `"}}${tail}` : tail);
      return;
    }
    case 'big-header': {
      const kib = Number(p['kib']);
      const headers: Record<string, string> = {};
      if (p['many'] === 1) for (let i = 0; i < kib * 16; i++) headers[`x-fuzz-${i}`] = 'a'.repeat(60);
      else headers['x-fuzz'] = 'a'.repeat(kib * 1024);
      return plain(200, ctx.correct, headers);
    }
    case 'deep-nesting': {
      const deep = nested(Number(p['depth']), String(p['shape']));
      const meta = ctx.sample['metadata'] as Record<string, unknown>;
      const obj = JSON.stringify({ ...ctx.sample, metadata: { ...meta, name: 'deep' } }).slice(0, -1) + `,"deep":${deep}}`;
      const body = target === 'list' ? `${frame(ctx, 'list').head}${obj}]}` : target === 'watch' ? `{"type":"ADDED","object":${obj}}\n` : obj;
      return plain(200, Buffer.from(body));
    }
    case 'wrong-types':
      return plain(200, wrongTypes(String(p['variant']), ctx, target));
    case 'escapes': {
      const e = escapes(String(p['where']), ctx, target);
      return plain(e.code, e.body);
    }
    case 'retry-after':
      return plain(Number(p['status']), json(status(Number(p['status']), 'slow down', 'TooManyRequests')), { 'retry-after': String(p['value']) });
    case 'reset-mid-frame': {
      const at = String(p['at']);
      if (at === 'before-headers') {
        res.socket?.destroy();
      } else if (at === 'after-headers') {
        res.writeHead(200, { 'content-type': contentType });
        res.flushHeaders();
        await delay(20);
        res.socket?.destroy();
      } else if (at === 'mid-json') {
        res.writeHead(200, { 'content-type': contentType });
        await write(res, ctx.correct.subarray(0, Math.floor(ctx.correct.length / 2)));
        await delay(20);
        res.socket?.destroy();
      } else {
        const s = raw(res, `HTTP/1.1 200 OK\r\ncontent-type: ${contentType}\r\ntransfer-encoding: chunked\r\n\r\n1f`);
        await delay(20);
        s.destroy();
      }
      return;
    }
    case 'hostile-error': {
      const code = Number(p['status']);
      const e = errorBody(String(p['body']), code, ctx);
      res.writeHead(code, { 'content-type': e.type });
      res.end(e.body);
      return;
    }
  }
}
