// Bench 4 — watch throughput. The simulator (own process) updates existing
// pods through `server.churn`; this process reads the watch two ways:
//   (a) a bare node:http client counting lines — what the simulator can
//       deliver, the ceiling for any client;
//   (b) an rxkube informer with one no-op handler, end to end.
// Two regimes:
//   live   — the writer runs at BENCH_WATCH_RATE (50k/s; 0 = as fast as it
//            can) while the client watches. Shows the rate delivered and how
//            far the cache lags the writes. When the writer cannot reach the
//            target, both clients are capped by it: the "write rate" row says so.
//   replay — the writes are made first; the client then watches from the
//            resourceVersion before them, so the simulator streams them from
//            its history as fast as the client reads. This is the client's
//            capacity, not capped by the writer. (The informer is given a
//            ListerWatcher whose first LIST is an exact read at that older
//            resourceVersion.)
//
// Lag: an event's receipt time (on events$, which fires after the store was
// updated; for the raw client, the last line of each chunk) minus the time
// its write happened. The simulator samples its resourceVersion about every
// millisecond during the churn; a write's time is interpolated between the
// samples around its resourceVersion, so it is approximate to one write batch.

import http from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { informer, kubeSource, type InformerStatus, type ListerWatcher } from 'rxkube';
import { envNumber, wallNow, type Benchmark, type Context } from './lib/context.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { summarize, type Summary } from './lib/stats.js';
import type { ChurnArgs, ChurnReply, SimReady } from './simServer.js';

const NAMESPACE = 'default';
const RV_MARKER = Buffer.from('"resourceVersion":"');

interface Stats {
  readonly watchesOpen: number;
  readonly watchesStarted: number;
}

/** When each event (by resourceVersion) reached the client. */
class Receipts {
  readonly rvs: Float64Array;
  readonly times: Float64Array;
  length = 0;
  constructor(capacity: number) {
    this.rvs = new Float64Array(capacity);
    this.times = new Float64Array(capacity);
  }
  add(rv: number, time: number): void {
    if (this.length >= this.rvs.length) return;
    this.rvs[this.length] = rv;
    this.times[this.length] = time;
    this.length++;
  }
}

/** What one client saw in one run. */
interface RunResult {
  readonly received: number;
  readonly expected: number;
  /** Events per second received: live, from the first write to the last receipt; replay, first to last receipt. */
  readonly rate: number;
  /** The simulator's own write rate in this run (live) or in the write phase (replay). */
  readonly writeRate: number;
  /** Live only: events written but not yet received when the writer finished. */
  readonly behindAtEnd?: number;
  /** Live only: last receipt minus last write, ms. */
  readonly drainMs?: number;
  /** Live only: per receipt, ms. */
  readonly lags?: Float64Array;
  readonly note?: string;
}

/** Time of the write that produced `rv`, interpolated between the simulator's (rv, time) samples. */
function writeTime(rvTimes: readonly number[], rv: number): number {
  const samples = rvTimes.length / 2;
  let lo = 0;
  let hi = samples - 1;
  if (rv <= (rvTimes[0] as number)) return rvTimes[1] as number;
  if (rv > (rvTimes[2 * hi] as number)) return rvTimes[2 * hi + 1] as number;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((rvTimes[2 * mid] as number) >= rv) hi = mid;
    else lo = mid + 1;
  }
  const r0 = rvTimes[2 * (lo - 1)] as number;
  const t0 = rvTimes[2 * (lo - 1) + 1] as number;
  const r1 = rvTimes[2 * lo] as number;
  const t1 = rvTimes[2 * lo + 1] as number;
  return r1 === r0 ? t1 : t0 + ((rv - r0) / (r1 - r0)) * (t1 - t0);
}

function lagsOf(receipts: Receipts, rvTimes: readonly number[]): Float64Array {
  const out = new Float64Array(receipts.length);
  for (let i = 0; i < receipts.length; i++) out[i] = (receipts.times[i] as number) - writeTime(rvTimes, receipts.rvs[i] as number);
  return out;
}

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Resolves when `done` does, or after `ms`; then the run reports what it got rather than hanging. */
async function within(done: Promise<void>, ms: number): Promise<void> {
  const ac = new AbortController();
  await Promise.race([done, sleep(ms, undefined, { signal: ac.signal }).catch(() => undefined)]);
  ac.abort();
}

/** 60 s plus 1 ms per 100 events: a run that needs it is reported incomplete, not hidden. */
function budgetMs(count: number): number {
  return 60_000 + count / 100;
}

function churn(sim: Child, count: number, perSecond: number): Promise<ChurnReply> {
  return sim.request<ChurnReply>('churn', { count, perSecond, namespace: NAMESPACE } satisfies ChurnArgs, 600_000);
}

/** A raw watch from `rv`, counting lines; one receipt (rv, time) per chunk, from its last complete line. */
async function rawWatch(ready: SimReady, rv: number, expected: number) {
  const ac = new AbortController();
  const url = `${ready.url}/api/v1/namespaces/${NAMESPACE}/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false&timeoutSeconds=1800`;
  const opened = wallNow();
  const req = http.get(url, { signal: ac.signal });
  req.on('error', () => undefined);
  const [res] = (await once(req, 'response')) as [http.IncomingMessage];
  if (res.statusCode !== 200) throw new Error(`raw watch: HTTP ${res.statusCode}`);
  const receipts = new Receipts(expected);
  const state = { lines: 0, first: 0, last: 0 };
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  res.on('data', (chunk: Buffer) => {
    const now = wallNow();
    let prevNl = -1;
    let lastNl = -1;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
      state.lines++;
      prevNl = lastNl;
      lastNl = i;
    }
    if (lastNl < 0) return;
    if (state.first === 0) state.first = now;
    state.last = now;
    const m = chunk.lastIndexOf(RV_MARKER, lastNl);
    if (m > prevNl) {
      const from = m + RV_MARKER.length;
      const to = chunk.indexOf(0x22, from);
      if (to > from && to < lastNl) receipts.add(Number(chunk.toString('latin1', from, to)), now);
    }
    if (state.lines >= expected) resolveDone();
  });
  res.on('end', () => resolveDone());
  res.on('error', () => resolveDone());
  return { opened, state, receipts, done, close: () => ac.abort() };
}

async function rawLive(sim: Child, ready: SimReady, count: number, perSecond: number): Promise<RunResult> {
  const rv = Number(await sim.request<string>('resourceVersion'));
  const w = await rawWatch(ready, rv, count);
  try {
    const reply = await churn(sim, count, perSecond);
    const behindAtEnd = Math.max(0, reply.sent - w.state.lines);
    await within(w.done, budgetMs(reply.sent));
    return live(reply, w.state.lines, w.state.last, behindAtEnd, lagsOf(w.receipts, reply.rvTimes));
  } finally {
    w.close();
  }
}

async function rawReplay(ready: SimReady, written: ChurnReply): Promise<RunResult> {
  const w = await rawWatch(ready, written.firstResourceVersion - 1, written.sent);
  try {
    await within(w.done, budgetMs(written.sent));
    return replay(written, w.state.lines, w.state.first, w.state.last);
  } finally {
    w.close();
  }
}

/** An informer on the simulator with one no-op handler, recording each update's receipt on events$. */
function watchedInformer(source: ListerWatcher<V1Pod>, expected: number) {
  const inf = informer<V1Pod>(source);
  const receipts = new Receipts(expected);
  const state = { seen: 0, first: 0, last: 0, handled: 0, errors: 0 };
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  // The no-op handler runs from its own buffer, so the informer does its full per-handler work; registering it starts the informer.
  const reg = inf.addHandler({
    update: () => {
      state.handled++;
    },
  });
  let status: InformerStatus | undefined;
  const subs = [
    inf.subscribe((ev) => {
      if (ev.type !== 'update') return;
      const now = wallNow();
      if (state.seen === 0) state.first = now;
      state.seen++;
      state.last = now;
      receipts.add(Number(ev.obj.metadata?.resourceVersion), now);
      if (state.seen >= expected) resolveDone();
    }),
    inf.status$.subscribe((s) => (status = s)),
    inf.errors$.subscribe(() => state.errors++),
  ];
  const finish = async (): Promise<string | undefined> => {
    // The handler may still be working through its buffer; let it finish before reading its count.
    await waitFor('the no-op handler to catch up', async () => state.handled >= state.seen || reg.closed, 30_000).catch(() => undefined);
    const relists = status?.reflector?.counters.relists ?? 0;
    const note = [relists > 0 ? `${relists} relists` : '', state.errors > 0 ? `${state.errors} errors` : '', state.handled < state.seen ? `handler saw ${state.handled}` : '']
      .filter(Boolean)
      .join(', ');
    return note || undefined;
  };
  const stop = async (): Promise<void> => {
    for (const s of subs) s.unsubscribe();
    reg.unsubscribe();
    await reg.done;
  };
  return { inf, receipts, state, done, finish, stop };
}

async function informerLive(sim: Child, kc: KubeConfig, count: number, perSecond: number): Promise<RunResult> {
  const w = watchedInformer(kubeSource(kc, 'v1/pods', { namespace: NAMESPACE }), count);
  try {
    const before = await sim.request<Stats>('stats');
    await w.inf.whenSynced({ timeout: 120_000 });
    // Writing before the watch is open would deliver the first events from history, not live.
    await waitFor('the informer watch to open', async () => (await sim.request<Stats>('stats')).watchesStarted > before.watchesStarted, 30_000);
    const reply = await churn(sim, count, perSecond);
    const behindAtEnd = Math.max(0, reply.sent - w.state.seen);
    await within(w.done, budgetMs(reply.sent));
    const note = await w.finish();
    return live(reply, w.state.seen, w.state.last, behindAtEnd, lagsOf(w.receipts, reply.rvTimes), note);
  } finally {
    await w.stop();
  }
}

/**
 * A source whose first LIST reads the state at `rv` (an exact read from the
 * simulator's history), so the informer's first watch begins there and the
 * simulator replays every event after it: a normal informer catching up.
 */
function replayFrom(lw: ListerWatcher<V1Pod>, rv: string): ListerWatcher<V1Pod> {
  let watched = false;
  return {
    supportsWatchList: false,
    list: (opts, signal) =>
      // A continue request carries its snapshot in the token and may not name a resourceVersion.
      lw.list(watched || opts.continue ? opts : { ...opts, resourceVersion: rv, resourceVersionMatch: 'Exact' }, signal),
    watch: (opts, signal) => {
      watched = true;
      return lw.watch(opts, signal);
    },
  };
}

async function informerReplay(kc: KubeConfig, written: ChurnReply): Promise<RunResult> {
  const source = replayFrom(kubeSource(kc, 'v1/pods', { namespace: NAMESPACE }), String(written.firstResourceVersion - 1));
  const w = watchedInformer(source, written.sent);
  try {
    await w.inf.whenSynced({ timeout: 120_000 });
    await within(w.done, budgetMs(written.sent));
    const note = await w.finish();
    return replay(written, w.state.seen, w.state.first, w.state.last, note);
  } finally {
    await w.stop();
  }
}

function live(reply: ChurnReply, received: number, lastReceipt: number, behindAtEnd: number, lags: Float64Array, note?: string): RunResult {
  const spanMs = lastReceipt - reply.startedAt;
  return {
    received,
    expected: reply.sent,
    rate: spanMs > 0 ? received / (spanMs / 1000) : Number.NaN,
    writeRate: reply.sent / (reply.elapsedMs / 1000),
    behindAtEnd,
    drainMs: Math.max(0, lastReceipt - reply.endedAt),
    lags,
    ...(note === undefined ? {} : { note }),
  };
}

function replay(written: ChurnReply, received: number, first: number, last: number, note?: string): RunResult {
  const spanMs = last - first;
  return {
    received,
    expected: written.sent,
    rate: spanMs > 0 ? (received - 1) / (spanMs / 1000) : Number.NaN,
    writeRate: written.sent / (written.elapsedMs / 1000),
    ...(note === undefined ? {} : { note }),
  };
}

function pooled(runs: readonly RunResult[]): Summary {
  const parts = runs.map((r) => r.lags ?? new Float64Array(0));
  const all = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return summarize(all);
}

function rowsFor(label: string, runs: readonly RunResult[], settings: string, lagNote: string): Row[] {
  const incomplete = runs.filter((x) => x.received < x.expected);
  const note = [settings, incomplete.length > 0 ? `incomplete: ${incomplete.map((x) => `${x.received}/${x.expected}`).join(' ')}` : '', ...runs.map((x) => x.note ?? '')]
    .filter(Boolean)
    .join('; ');
  const rows = [
    row('watch', label, 'simulator write rate', 'events/s', summarize(runs.map((x) => x.writeRate))),
    row('watch', label, 'received', 'events/s', summarize(runs.map((x) => x.rate)), note),
  ];
  if (runs.every((x) => x.lags !== undefined)) {
    rows.push(row('watch', label, 'behind when writes ended', 'events', summarize(runs.map((x) => x.behindAtEnd ?? Number.NaN))));
    rows.push(row('watch', label, 'drain after last write', 'ms', summarize(runs.map((x) => x.drainMs ?? Number.NaN))));
    rows.push(row('watch', label, 'lag write→receipt', 'ms', { ...pooled(runs), rme: Number.NaN }, lagNote));
  }
  return rows;
}

export const watchThroughput: Benchmark = {
  name: 'watch',
  description: 'watch events/s from the simulator: raw node:http line counter vs rxkube informer with a no-op handler; live lag and replay capacity',
  async run(ctx: Context): Promise<Row[]> {
    const pods = ctx.scaled(envNumber('BENCH_WATCH_PODS', 10_000));
    const count = ctx.scaled(envNumber('BENCH_WATCH_EVENTS', 50_000));
    const replayCount = ctx.scaled(envNumber('BENCH_WATCH_REPLAY_EVENTS', 30_000));
    const perSecond = envNumber('BENCH_WATCH_RATE', 50_000);
    ctx.log(`watch: starting the simulator with ${pods} pods`);
    const sim = new Child(
      new URL('./simServer.js', import.meta.url),
      [`--pods=${pods}`, '--namespaces=1', `--history=${replayCount + 10_000}`],
      ['--max-old-space-size=4096'],
    );
    try {
      const ready = await sim.next<SimReady>(300_000);
      const kc = new KubeConfig();
      kc.loadFromString(ready.kubeConfigYaml);
      const target = perSecond > 0 ? `${perSecond}/s target` : 'writer flat out';
      const runs = { rawLive: [] as RunResult[], infLive: [] as RunResult[], rawReplay: [] as RunResult[], infReplay: [] as RunResult[] };
      const show = (what: string, r: RunResult): void =>
        ctx.log(`watch: ${what}: ${r.received}/${r.expected} events, ${r.rate.toFixed(0)}/s received, writer ${r.writeRate.toFixed(0)}/s${r.note ? ` (${r.note})` : ''}`);
      for (let i = 1; i <= ctx.repeats; i++) {
        const a = await rawLive(sim, ready, count, perSecond);
        runs.rawLive.push(a);
        show(`live raw, run ${i}`, a);
        const b = await informerLive(sim, kc, count, perSecond);
        runs.infLive.push(b);
        show(`live informer, run ${i}`, b);
        // Written once, replayed to each client from the simulator's history.
        const written = await churn(sim, replayCount, 0);
        const c = await rawReplay(ready, written);
        runs.rawReplay.push(c);
        show(`replay raw, run ${i}`, c);
        const d = await informerReplay(kc, written);
        runs.infReplay.push(d);
        show(`replay informer, run ${i}`, d);
      }
      return [
        ...rowsFor('live: raw node:http line count', runs.rawLive, `${count} updates, ${target}`, 'last line of each chunk'),
        ...rowsFor('live: rxkube informer + no-op handler', runs.infLive, `${count} updates, ${target}`, 'every event, on events$'),
        ...rowsFor('replay: raw node:http line count', runs.rawReplay, `${replayCount} events from history`, ''),
        ...rowsFor('replay: rxkube informer + no-op handler', runs.infReplay, `${replayCount} events from history`, ''),
      ];
    } finally {
      await sim.request('close', {}, 30_000).catch(() => undefined);
      await sim.close();
    }
  },
};
