// A minimal API server for the comparison benchmarks, in its own process: it
// serves pre-serialised 4–5 KB pods (managedFields included) so that the
// server costs almost nothing per object and every client is measured against
// the same bytes. Like kube-apiserver, it writes a pod's apiVersion and kind
// in watch events but not on the items of a list. It speaks just enough of
// kube-apiserver for client-node's makeInformer, rxkube's informer and the
// floor client:
//
//   GET  /api/v1/pods[?limit=&continue=]            paged LIST (continue = offset)
//   GET  /api/v1/pods?watch=true&resourceVersion=R  MODIFIED events after R, from
//        its history, written as fast as the socket drains; a resourceVersion
//        older than the history is an ERROR 410 event (as kube-apiserver does)
//   POST /bench/modify?count=&perSecond=&keys=      appends `count` MODIFIED events
//        over the first `keys` pods, at `perSecond` (0 = at once); each event's
//        pod carries its write time in the `bench.rxkube.io/sent` annotation; replies
//        { count, firstRv, lastRv, lastKey: the pod the last event modified, elapsedMs }
//   GET  /bench/stats                               { watches: open watch count, resourceVersion }
//   POST /bench/expire                              forgets the history and ends
//        every watch with ERROR 410, so each client relists
//
// Started by the runner with child_process.fork, it posts { event: 'ready', … };
// by hand (`node build/bench/wireServer.js --pods=20000`) it prints the same line.

import http from 'node:http';
import type { V1Pod } from '@kubernetes/client-node';
import type { AddressInfo } from 'node:net';
import { envNumber, wallNow } from './lib/context.js';
import { post, serve } from './lib/ipc.js';
import { namespaceOf, wirePod } from './lib/pods.js';

/** What the runner learns once the pods are serialised. */
export interface WireReady {
  readonly event: 'ready';
  readonly url: string;
  readonly kubeConfigYaml: string;
  readonly pods: number;
  /** Mean JSON size of one pod, bytes. */
  readonly podBytes: number;
}

/** Reply of POST /bench/modify. */
export interface ModifyReply {
  readonly count: number;
  readonly firstRv: number;
  readonly lastRv: number;
  /** `namespace/name` of the pod the last event modified (at `lastRv`): a client holding it at `lastRv` has applied every event. */
  readonly lastKey: string;
  readonly elapsedMs: number;
}

const RV_MARK = '@@RV@@';
const SENT_MARK = '@@SENT@@';
const BATCH_BYTES = 64 * 1024;

function arg(name: string, fallback: number): number {
  const prefix = `--${name}=`;
  const raw = process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
  if (raw === undefined) return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`--${name}: expected a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

const count = arg('pods', envNumber('BENCH_WIRE_PODS', 20_000));
const namespaces = Math.max(1, arg('namespaces', 20));

/** Every pod's JSON begins with its type, which a list item leaves out. */
const TYPE_PREFIX = '{"apiVersion":"v1","kind":"Pod",';

// Each pod's JSON in three parts around its resourceVersion and its write stamp, so an event costs two concatenations.
const head: string[] = new Array<string>(count);
const mid: string[] = new Array<string>(count);
const tail: string[] = new Array<string>(count);
const podKey: string[] = new Array<string>(count);
const podRv = new Float64Array(count);
const podSent = new Float64Array(count);
let bytes = 0;
for (let i = 0; i < count; i++) {
  const pod = wirePod(i, namespaceOf(i, namespaces), 0);
  // managedFields last, where kube-apiserver puts them (ObjectMeta's field order).
  const { annotations, resourceVersion: _rv, managedFields, ...meta } = pod.metadata as Record<string, unknown>;
  pod.metadata = { ...meta, resourceVersion: RV_MARK, annotations: { ...(annotations as Record<string, string>), 'bench.rxkube.io/sent': SENT_MARK }, managedFields } as V1Pod['metadata'];
  podKey[i] = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  const json = JSON.stringify(pod);
  const a = json.indexOf(RV_MARK);
  const b = json.indexOf(SENT_MARK);
  if (a < 0 || b < a) throw new Error('pod template: resourceVersion must come before the annotations');
  if (!json.startsWith(TYPE_PREFIX)) throw new Error(`pod template: must begin with ${TYPE_PREFIX}`);
  head[i] = json.slice(0, a);
  mid[i] = json.slice(a + RV_MARK.length, b);
  tail[i] = json.slice(b + SENT_MARK.length);
  podRv[i] = i + 1;
  bytes += json.length;
}
let rv = count;

/** The events after `historyBase`: event k has resourceVersion historyBase + 1 + k. */
let historyBase = rv;
let historyPod: number[] = [];
let historySent: number[] = [];
/** The pod the latest event modified. */
let lastPod = -1;

function podJson(i: number, atRv: number, sent: number): string {
  return `${head[i]}${atRv}${mid[i]}${sent}${tail[i]}`;
}

/** A pod as an item of a list: without apiVersion and kind. */
function listItemJson(i: number, atRv: number, sent: number): string {
  return `{${(head[i] as string).slice(TYPE_PREFIX.length)}${atRv}${mid[i]}${sent}${tail[i]}`;
}

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

/** Writes and waits for the socket to drain when its buffer is full, so a slow reader slows the writer. */
async function write(res: http.ServerResponse, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}

async function list(url: URL, res: http.ServerResponse): Promise<void> {
  const limit = Number(url.searchParams.get('limit') ?? '0') || count;
  const from = Number(url.searchParams.get('continue') ?? '0') || 0;
  const to = Math.min(count, from + limit);
  const cont = to < count ? `,"continue":"${to}","remainingItemCount":${count - to}` : '';
  res.writeHead(200, { 'content-type': 'application/json' });
  let batch = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${rv}"${cont}},"items":[`;
  for (let i = from; i < to; i++) {
    batch += (i === from ? '' : ',') + listItemJson(i, podRv[i] as number, podSent[i] as number);
    if (batch.length >= BATCH_BYTES) {
      if (!(await write(res, batch))) return;
      batch = '';
    }
  }
  res.end(`${batch}]}`);
}

/** Open watches waiting for events: woken by modify(), ended by expire(). */
const waiting = new Set<() => void>();
const open = new Set<http.ServerResponse>();

async function watch(url: URL, res: http.ServerResponse): Promise<void> {
  const from = url.searchParams.get('resourceVersion');
  const start = from === null || from === '' || from === '0' ? rv : Number(from);
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  if (!Number.isSafeInteger(start) || start < historyBase) {
    res.end(`{"type":"ERROR","object":${status(410, 'Expired', `too old resource version: ${from} (${historyBase})`)}}\n`);
    return;
  }
  const timeout = Number(url.searchParams.get('timeoutSeconds') ?? '0');
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  open.add(res);
  res.on('close', () => {
    open.delete(res);
    if (timer !== undefined) clearTimeout(timer);
  });
  let next = start + 1;
  const base = historyBase;
  while (!res.writableEnded && !res.destroyed) {
    // The history was forgotten under this watch: expire() has ended it.
    if (historyBase !== base) return;
    const last = historyBase + historyPod.length;
    if (next > last) {
      await new Promise<void>((resolve) => waiting.add(resolve));
      continue;
    }
    let batch = '';
    for (; next <= last && batch.length < BATCH_BYTES; next++) {
      const k = next - historyBase - 1;
      batch += `{"type":"MODIFIED","object":${podJson(historyPod[k] as number, next, historySent[k] as number)}}\n`;
    }
    if (!(await write(res, batch))) return;
  }
}

function wake(): void {
  const all = [...waiting];
  waiting.clear();
  for (const w of all) w();
}

function append(n: number, keys: number, seq: number): void {
  const now = wallNow();
  for (let j = 0; j < n; j++) {
    const i = (seq + j) % keys;
    rv++;
    podRv[i] = rv;
    podSent[i] = now;
    historyPod.push(i);
    historySent.push(now);
    lastPod = i;
  }
  wake();
}

async function modify(url: URL): Promise<ModifyReply> {
  const n = Number(url.searchParams.get('count') ?? '0');
  const perSecond = Number(url.searchParams.get('perSecond') ?? '0');
  const keys = Math.min(count, Number(url.searchParams.get('keys') ?? '0') || count);
  if (!Number.isSafeInteger(n) || n < 1) throw new TypeError(`modify: count must be a positive integer, got ${n}`);
  const firstRv = rv + 1;
  const t0 = performance.now();
  if (!(perSecond > 0)) append(n, keys, 0);
  else {
    let done = 0;
    while (done < n) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const due = Math.min(n, Math.floor(((performance.now() - t0) * perSecond) / 1000)) - done;
      if (due > 0) append(due, keys, done);
      done += Math.max(0, due);
    }
  }
  return { count: n, firstRv, lastRv: rv, lastKey: podKey[lastPod] as string, elapsedMs: performance.now() - t0 };
}

function expire(): number {
  historyBase = rv;
  historyPod = [];
  historySent = [];
  const ended = open.size;
  for (const res of [...open]) res.end(`{"type":"ERROR","object":${status(410, 'Expired', 'The resourceVersion for the provided watch is too old.')}}\n`);
  wake();
  return ended;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bench');
  const fail = (err: unknown): void => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end(status(500, 'InternalError', err instanceof Error ? err.message : String(err)));
  };
  if (req.method === 'POST' && url.pathname === '/bench/modify') {
    modify(url).then((r) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(r)), fail);
    return;
  }
  if (req.method === 'POST' && url.pathname === '/bench/expire') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ended: expire() }));
    return;
  }
  if (req.method === 'GET' && url.pathname === '/bench/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ watches: open.size, resourceVersion: rv }));
    return;
  }
  if (req.method === 'GET' && url.pathname === '/api/v1/pods') {
    (url.searchParams.get('watch') === 'true' ? watch(url, res) : list(url, res)).catch(fail);
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' }).end(status(404, 'NotFound', `${req.method} ${url.pathname}: not served by the benchmark server`));
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const ready: WireReady = {
  event: 'ready',
  url: address,
  kubeConfigYaml: [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: bench',
    '  cluster:',
    `    server: ${address}`,
    // client-node refuses plain http unless TLS verification is explicitly off; there is no TLS to verify.
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: bench',
    '  user: {}',
    'contexts:',
    '- name: bench',
    '  context: { cluster: bench, user: bench }',
    'current-context: bench',
    '',
  ].join('\n'),
  pods: count,
  podBytes: bytes / count,
};

if (process.send === undefined) {
  process.stdout.write(`${JSON.stringify(ready)}\n`);
} else {
  serve({
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return true;
    },
  });
  await post(ready);
}
