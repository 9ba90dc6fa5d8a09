import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { once } from 'node:events';
import { Rng } from '../helpers/random.js';
import { answer, type AnswerContext } from './answers.js';
import { describeBehaviour, type Behaviour, type Plan, type Target } from './plan.js';

/**
 * The hostile API server: raw `node:http` on 127.0.0.1 serving one namespaced
 * custom resource (`fuzz.rxkube.io/v1` widgets in namespace `fuzz`). It holds
 * real state and answers lists (with `limit`/`continue`), watches (history,
 * then live events and bookmarks) and server-side apply correctly, except
 * that each request takes the next hostile answer its target has in the
 * plan. `heal()` ends the hostile phase: no more hostile answers, the
 * history is compacted past every resourceVersion sent so far (a watch
 * from any of them gets a 410 ERROR event, so the client relists), and correct watches are closed.
 */

export const GROUP = 'fuzz.rxkube.io';
export const NAMESPACE = 'fuzz';
const API = `/apis/${GROUP}/v1`;
const BOOKMARK_MS = 1000;
const MAX_WATCH_MS = 8000;

export interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

interface HistoryEntry {
  readonly rv: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Widget;
}

const ESCAPED_ANNOTATION = 'note\u001b]0;title\u0007\u001b[2J\u009b1m\r';
/**
 * A 10,000-deep value stands in the server's state as this string and is spliced into the JSON text on the way
 * out: `JSON.stringify` itself overflows the stack at that depth, and the server must not fail where it tests
 * whether the client does.
 */
const DEEP_MARKER = 'fuzz-deep-10000';
const DEEP_TEXT = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
/** JSON text of anything the server sends that may hold its own objects. */
const toJson = (v: unknown): string => JSON.stringify(v).replaceAll(`"${DEEP_MARKER}"`, DEEP_TEXT);

export class HostileServer {
  readonly #plan: Plan;
  readonly #server: Server;
  // The objects, by name: the truth the client's cache must end up equal to.
  readonly #objects = new Map<string, Widget>();
  // Every change since the start, for watches that resume from a resourceVersion.
  readonly #history: HistoryEntry[] = [];
  // Open correct watches, closed on heal so the client meets the compacted history.
  readonly #watches = new Set<ServerResponse>();
  // Hostile answers not taken yet, per target, in plan order.
  readonly #queues: Record<Target, Behaviour[]> = { list: [], watch: [], write: [] };
  // Hostile answers still being written (trickles, endless bodies), for the report.
  readonly #held = new Set<string>();
  // Pages of lists in progress: a snapshot per continue token.
  readonly #snapshots = new Map<string, { rv: number; items: Widget[] }>();
  readonly #sockets = new Set<Socket>();
  readonly #closing = new AbortController();
  #rv = 1;
  #compactedBelow = 0;
  #healthy = false;
  #uid = 0;
  #snapshotId = 0;
  /** Hostile answers given, by description. */
  readonly taken: string[] = [];
  /** Requests seen, by target. */
  readonly requests: Record<Target | 'other', number> = { list: 0, watch: 0, write: 0, other: 0 };

  // Told of each hostile answer as it is given.
  readonly #onTaken: (what: string) => void;

  constructor(plan: Plan, onTaken: (what: string) => void = () => undefined) {
    this.#plan = plan;
    this.#onTaken = onTaken;
    for (const b of plan.behaviours) this.#queues[b.target].push(b);
    for (let i = 0; i < plan.initialObjects; i++) this.#put(`w-${i}`, { v: 0 });
    this.#server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => void this.#handle(req, res).catch(() => res.destroy()));
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#server.on('clientError', (_err, s: Socket) => s.destroy());
  }

  async listen(): Promise<number> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    return (this.#server.address() as { port: number }).port;
  }

  /** Whether every planned hostile answer was given. */
  get planTaken(): boolean {
    return Object.values(this.#queues).every((q) => q.length === 0);
  }

  get held(): readonly string[] {
    return [...this.#held];
  }

  /** The server's state, name → resourceVersion. */
  state(): Map<string, string> {
    return new Map([...this.#objects].map(([k, o]) => [`${NAMESPACE}/${k}`, o.metadata.resourceVersion]));
  }

  objects(): readonly Widget[] {
    return [...this.#objects.values()];
  }

  /** The server's own writes of the hostile phase (another actor in the cluster), paced by the plan. */
  async runWorkload(signal: AbortSignal): Promise<void> {
    const rng = new Rng(this.#plan.workloadSeed);
    let next = this.#plan.initialObjects;
    for (let i = 0; i < this.#plan.writes && !signal.aborted && !this.#healthy; i++) {
      await new Promise((r) => setTimeout(r, this.#plan.writeEveryMs));
      const names = [...this.#objects.keys()];
      const op = names.length === 0 ? 'create' : rng.weighted({ create: 2, update: 5, delete: 1 });
      if (op === 'create') {
        const hostile = this.#plan.hostileObjects && i === 0;
        if (hostile) this.#put(`w-${next++}`, { v: 1, deep: DEEP_MARKER }, { [ESCAPED_ANNOTATION]: `value${ESCAPED_ANNOTATION}` });
        else this.#put(`w-${next++}`, { v: 1 });
      } else if (op === 'update') {
        const name = rng.pick(names);
        const cur = this.#objects.get(name) as Widget;
        this.#put(name, { ...cur.spec, v: (typeof cur.spec['v'] === 'number' ? cur.spec['v'] : 0) + 1 }, cur.metadata.annotations);
      } else {
        const name = rng.pick(names);
        const cur = this.#objects.get(name) as Widget;
        this.#objects.delete(name);
        this.#record('DELETED', { ...cur, metadata: { ...cur.metadata, resourceVersion: String(++this.#rv) } });
      }
    }
  }

  /** Ends the hostile phase (see the class comment). */
  heal(): void {
    this.#healthy = true;
    // A resourceVersion no client has seen, below which history is gone: whatever a hostile list or watch made the
    // client believe, its next watch meets a 410 and it relists from the truth.
    this.#compactedBelow = ++this.#rv;
    for (const res of this.#watches) res.end();
    this.#watches.clear();
  }

  async close(): Promise<void> {
    this.#closing.abort();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #put(name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): Widget {
    const existing = this.#objects.get(name);
    const obj: Widget = {
      apiVersion: `${GROUP}/v1`,
      kind: 'Widget',
      metadata: { name, namespace: NAMESPACE, uid: existing?.metadata.uid ?? `uid-${++this.#uid}`, resourceVersion: String(++this.#rv), ...(annotations && { annotations }) },
      spec,
    };
    this.#objects.set(name, obj);
    this.#record(existing === undefined ? 'ADDED' : 'MODIFIED', obj);
    return obj;
  }

  #record(type: HistoryEntry['type'], object: Widget): void {
    const entry = { rv: Number(object.metadata.resourceVersion), type, object };
    this.#history.push(entry);
    for (const res of this.#watches) res.write(`${toJson({ type, object })}\n`);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fuzz');
    const target = this.#target(req, url);
    this.requests[target ?? 'other']++;
    const body = target === 'write' ? await this.#readBody(req) : Buffer.alloc(0);
    const hostile = target !== undefined && !this.#healthy ? this.#queues[target].shift() : undefined;
    if (hostile !== undefined && hostile.kind !== 'correct') {
      const what = describeBehaviour(hostile);
      this.taken.push(what);
      this.#onTaken(what);
      const id = `${what} #${this.taken.length}`;
      this.#held.add(id);
      res.on('close', () => this.#held.delete(id));
      // A write is committed before its answer is mangled, as when a proxy or a broken server damages the response to a
      // write that landed; only refusals (errors, Retry-After) leave the state alone. Otherwise a client that takes a
      // mangled answer for success would be blamed for a write the server dropped.
      const refused = hostile.kind === 'retry-after' || hostile.kind === 'hostile-error';
      const correct = target === 'write' ? (refused ? this.#applyDryRun(url, body) : this.#commit(url, body)) : target === 'list' ? this.#listBody(url) : this.#watchLines(url);
      const ctx: AnswerContext = {
        correct,
        sample: { ...(this.#objects.values().next().value ?? this.#fallbackSample()) },
        resourceVersion: String(this.#rv),
        token: (req.headers.authorization ?? '').replace(/^Bearer /, ''),
        isWatch: target === 'watch',
        signal: this.#closing.signal,
      };
      await answer(res, hostile, ctx);
      this.#held.delete(id);
      return;
    }
    if (target === 'list') return this.#json(res, 200, this.#listBody(url));
    if (target === 'watch') return this.#watch(url, res);
    if (target === 'write') return this.#apply(url, body, res);
    return this.#json(res, 404, Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' })));
  }

  #target(req: IncomingMessage, url: URL): Target | undefined {
    const listPath = url.pathname === `${API}/widgets` || url.pathname === `${API}/namespaces/${NAMESPACE}/widgets`;
    if (req.method === 'GET' && listPath) return url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1' ? 'watch' : 'list';
    if (req.method === 'PATCH' && url.pathname.startsWith(`${API}/namespaces/${NAMESPACE}/widgets/`)) return 'write';
    return undefined;
  }

  async #readBody(req: IncomingMessage): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    return Buffer.concat(parts);
  }

  #json(res: ServerResponse, code: number, body: Buffer): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(body);
  }

  #fallbackSample(): Widget {
    return { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'sample', namespace: NAMESPACE, uid: 'uid-0', resourceVersion: String(this.#rv) }, spec: {} };
  }

  #listBody(url: URL): Buffer {
    const limit = Number(url.searchParams.get('limit') ?? '0');
    const token = url.searchParams.get('continue');
    let snap = token === null ? undefined : this.#snapshots.get(token.split(':')[0] ?? '');
    const offset = token === null ? 0 : Number(token.split(':')[1] ?? '0');
    let id = token === null ? '' : (token.split(':')[0] ?? '');
    if (snap === undefined) {
      if (token !== null) return Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'continue token expired' }));
      id = String(++this.#snapshotId);
      snap = { rv: this.#rv, items: [...this.#objects.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)) };
      this.#snapshots.set(id, snap);
    }
    const end = limit > 0 ? Math.min(snap.items.length, offset + limit) : snap.items.length;
    const more = end < snap.items.length;
    const metadata = { resourceVersion: String(snap.rv), ...(more && { continue: `${id}:${end}`, remainingItemCount: snap.items.length - end }) };
    return Buffer.from(toJson({ apiVersion: `${GROUP}/v1`, kind: 'WidgetList', metadata, items: snap.items.slice(offset, end) }));
  }

  /** The lines a correct watch from the request's resourceVersion starts with (what hostile answers corrupt). */
  #watchLines(url: URL): Buffer {
    const from = Number(url.searchParams.get('resourceVersion') ?? '0');
    const lines = this.#history.filter((h) => h.rv > from).map((h) => toJson({ type: h.type, object: h.object }));
    lines.push(JSON.stringify({ type: 'BOOKMARK', object: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { resourceVersion: String(this.#rv) } } }));
    return Buffer.from(`${lines.join('\n')}\n`);
  }

  #watch(url: URL, res: ServerResponse): void {
    const rvParam = url.searchParams.get('resourceVersion') ?? '';
    const from = rvParam === '' || rvParam === '0' ? this.#rv : Number(rvParam);
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (!Number.isFinite(from) || from < this.#compactedBelow) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: `too old resource version: ${rvParam} (${this.#compactedBelow})` } })}\n`);
      return;
    }
    for (const h of this.#history) if (h.rv > from) res.write(`${toJson({ type: h.type, object: h.object })}\n`);
    this.#watches.add(res);
    const bookmarks = url.searchParams.get('allowWatchBookmarks') === 'true';
    const timer = setInterval(() => {
      if (bookmarks) res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { resourceVersion: String(this.#rv) } } })}\n`);
    }, BOOKMARK_MS);
    const timeoutS = Number(url.searchParams.get('timeoutSeconds') ?? '0');
    const end = setTimeout(() => res.end(), Math.min(MAX_WATCH_MS, timeoutS > 0 ? timeoutS * 1000 : MAX_WATCH_MS));
    res.on('close', () => {
      clearInterval(timer);
      clearTimeout(end);
      this.#watches.delete(res);
    });
  }

  /** Server-side apply, reduced to what the controller sends: annotations merged, the object created when missing. */
  #merge(url: URL, body: Buffer): { obj: Widget; changed: boolean; created: boolean } | { error: string } {
    let config: { metadata?: { annotations?: Record<string, string> }; spec?: Record<string, unknown> };
    try {
      config = JSON.parse(body.toString()) as typeof config;
    } catch {
      return { error: 'body is not JSON' };
    }
    const name = decodeURIComponent(url.pathname.slice(`${API}/namespaces/${NAMESPACE}/widgets/`.length));
    const cur = this.#objects.get(name);
    const annotations = { ...cur?.metadata.annotations, ...config.metadata?.annotations };
    const changed = cur === undefined || JSON.stringify(annotations) !== JSON.stringify(cur.metadata.annotations ?? {});
    const obj: Widget = cur ?? { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, namespace: NAMESPACE, uid: '', resourceVersion: '' }, spec: config.spec ?? {} };
    return { obj: { ...obj, metadata: { ...obj.metadata, annotations } }, changed, created: cur === undefined };
  }

  #applyDryRun(url: URL, body: Buffer): Buffer {
    const m = this.#merge(url, body);
    return Buffer.from(toJson('error' in m ? {} : m.obj));
  }

  #apply(url: URL, body: Buffer, res: ServerResponse): void {
    const m = this.#merge(url, body);
    if ('error' in m) return this.#json(res, 400, Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'BadRequest', code: 400, message: m.error })));
    const obj = m.changed ? this.#put(m.obj.metadata.name, m.obj.spec, m.obj.metadata.annotations) : m.obj;
    this.#json(res, m.created ? 201 : 200, Buffer.from(toJson(obj)));
  }

  /** Applies a write and returns the object a correct answer would carry. */
  #commit(url: URL, body: Buffer): Buffer {
    const m = this.#merge(url, body);
    if ('error' in m) return Buffer.from('{}');
    return Buffer.from(toJson(m.changed ? this.#put(m.obj.metadata.name, m.obj.spec, m.obj.metadata.annotations) : m.obj));
  }
}
