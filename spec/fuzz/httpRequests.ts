/**
 * A seeded generator of malformed and odd raw HTTP/1.x requests, for fuzzing the runner's probe and metrics
 * servers: mutated request lines (methods, targets WHATWG's URL parser throws on, versions, separators, line
 * endings), headers (missing, duplicated, oversized, folded, with control bytes, conflicting lengths and
 * encodings, Expect and Upgrade), bodies (absent, short, chunked right and wrong), pipelining, bytes split
 * across writes, truncation, flipped bytes, and how the client ends (half-close or abort).
 */
import type { RawEnding } from '../helpers/rawHttp.js';
import { Rng } from '../helpers/random.js';

/** One generated request: the bytes as written (one chunk per write) and how the client ends. */
export interface RequestCase {
  /** Replays it: the seed and its index. */
  readonly id: string;
  readonly chunks: readonly Buffer[];
  readonly ending: RawEnding;
}

const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'PRI', 'get', 'GETT', 'G ET', 'BREW', 'M-SEARCH', '', 'GET\u0000', 'ÉGET'];
const ROUTES = ['/healthz', '/readyz', '/livez', '/metrics', '/healthz?verbose', '/readyz?verbose', '/nope'];
const TARGETS = [
  '/healthz', '/readyz', '/livez', '/metrics', '/healthz?verbose', '/readyz?verbose=1', '/livez?exclude=x&verbose',
  '//[', 'http://[', '//x:99999/', 'http://x:99999/', '//', '///healthz', '*', '', '?', '/?', '[', ']', '/[', '/%', '/%zz', '/%00',
  '/\u001b[2J', '/\u0000', '/é', '/..', '/../healthz', '/healthz#frag', '#', 'http://pod/healthz', 'HTTPS://pod:1/readyz?verbose',
  'http://user:pass@h/healthz', 'ftp://x/', 'javascript:alert(1)', 'pod:8081', '/healthz?%', '/healthz?a=%zz', 'http://:0/', 'http://[::1/',
  'http://[::1]:8081/metrics', '/\\healthz', '/heal thz',
];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/0.9', 'HTTP/2.0', 'HTTP/3', 'HTTP/1.12', 'http/1.1', 'HTTP/', 'HTTP/1.1 x', '', 'HTTP/1.1\u0000'];
const EOLS = ['\r\n', '\r\n', '\r\n', '\r\n', '\n', '\r', '\r\r\n', '\n\r'];
const ODD_HEADERS = [
  'Host: second', 'Host: bad host', 'Host: [', 'Host:', 'Content-Length: 0', 'Content-Length: 5', 'Content-Length: -1', 'Content-Length: abc',
  'Content-Length: 99999999999999999999', 'Content-Length: 1, 2', 'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked',
  'Transfer-Encoding: chunked, gzip', 'Transfer-Encoding: identity', 'Transfer-Encoding: x', 'Expect: 100-continue', 'Expect: tea',
  'Connection: close', 'Connection: keep-alive', 'Connection: Upgrade', 'Connection: TE, close', 'Upgrade: websocket', 'Upgrade: h2c',
  'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA', 'nocolon', 'Host : spaced', ' folded continuation', '\tfolded tab', '(bad): name', ': empty name',
  'X-Nul: a\u0000b', 'X-Esc: \u001b]52;c;cGF3bmVk\u0007', 'X-Del: \u007f', 'X-Latin: \u00ff\u00fe', 'Accept: */*', 'User-Agent: kube-probe/1.31',
  'Cookie: a=b', 'Authorization: Bearer x', 'X-Forwarded-For: 1.2.3.4', 'Range: bytes=0-1', 'If-None-Match: *',
];

/** `count` requests drawn from `seed`; the same seed always gives the same requests. */
export function malformedRequests(seed: number, count: number): RequestCase[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, i) => one(rng.fork(), `seed ${seed} case ${i}`));
}

function one(rng: Rng, id: string): RequestCase {
  const requests = Array.from({ length: rng.chance(0.15) ? rng.int(2, 3) : 1 }, () => request(rng));
  let bytes: Buffer = Buffer.from(requests.join(''), 'latin1');
  if (rng.chance(0.07)) bytes = bytes.subarray(0, rng.int(0, bytes.length));
  if (rng.chance(0.07)) bytes = flip(rng, bytes);
  if (rng.chance(0.05)) bytes = Buffer.concat([bytes, noise(rng, rng.int(1, 64))]);
  return { id, chunks: split(rng, bytes), ending: rng.chance(0.12) ? 'abort' : 'end' };
}

// Each part of a request is odd only sometimes, so that the routes' answer paths are reached as often as the parser's refusals.
function request(rng: Rng): string {
  const eol = rng.chance(0.92) ? '\r\n' : rng.pick(EOLS);
  const sp = rng.chance(0.97) ? ' ' : rng.pick(['  ', '\t', '', ' \u0000']);
  const method = rng.chance(0.7) ? rng.pick(['GET', 'GET', 'HEAD']) : rng.pick(METHODS);
  const target = rng.chance(0.4) ? rng.pick(ROUTES) : rng.chance(0.05) ? `/${'a'.repeat(rng.int(1_000, 20_000))}` : rng.chance(0.05) ? `/${noise(rng, rng.int(1, 24)).toString('latin1')}` : rng.pick(TARGETS);
  const version = rng.chance(0.8) ? 'HTTP/1.1' : rng.pick(VERSIONS);
  const head = [`${method}${sp}${target}${sp}${version}`];
  if (rng.chance(0.93)) head.push('Host: probe');
  for (let n = rng.chance(0.65) ? 0 : rng.int(1, 4); n > 0; n--) head.push(rng.pick(ODD_HEADERS));
  if (rng.chance(0.03)) head.push(`X-Big: ${'b'.repeat(rng.int(8_000, 40_000))}`);
  if (rng.chance(0.03)) for (let n = rng.int(50, 400); n > 0; n--) head.push(`X-${n}: v`);
  return `${head.join(eol)}${eol}${eol}${body(rng, head)}`;
}

function body(rng: Rng, head: readonly string[]): string {
  if (head.some((h) => h.startsWith('Transfer-Encoding: chunked')) && rng.chance(0.7)) {
    return rng.pick(['0\r\n\r\n', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\n', '5\r\nhi\r\n', 'ffffffffffffffffff\r\n', '3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n']);
  }
  if (rng.chance(0.15)) return 'x'.repeat(rng.int(0, 10));
  return '';
}

/** A few bytes replaced by random ones. */
function flip(rng: Rng, bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  for (let n = rng.int(1, 3); n > 0 && copy.length > 0; n--) copy[rng.int(0, copy.length - 1)] = rng.int(0, 255);
  return copy;
}

function noise(rng: Rng, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => rng.int(0, 255)));
}

/** The bytes as one to five writes, cut at random places. */
function split(rng: Rng, bytes: Buffer): Buffer[] {
  const cuts = Array.from({ length: rng.int(0, 4) }, () => rng.int(0, bytes.length)).sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    chunks.push(bytes.subarray(at, cut));
    at = cut;
  }
  return chunks.filter((c) => c.length > 0);
}
