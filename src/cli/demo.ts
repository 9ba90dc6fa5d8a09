/**
 * `rxkube demo` (`npm run demo`): the simulator seeded with pods and churning
 * them, an informer with an example handler (a small reconciler with a
 * coalescing buffer), faults injected on a schedule, the live view (or a
 * status line a second in a pipe), and at the end a summary: how each fault
 * was recovered, and whether the cache held exactly what the server held.
 */
import type { Subscription } from 'rxjs';
import { unwrapTombstone } from '../store/index.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import type { KubeObject } from '../store/types.js';
import { duration } from './columns.js';
import { resolveResource } from './resources.js';
import { WatchSession } from './session.js';
import { startSimulator, type Simulator } from './simulator.js';
import { coloursFor, interrupted, liveScreen, writeText } from './terminal.js';
import { printable } from '../errors/printable.js';
import { renderView } from './view.js';
import { timerDelay } from '../options/timerDelay.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** How long churn and faults run, ms. */
  readonly durationMs: number;
  /** Pod writes per second. */
  readonly perSecond: number;
}

/** One scheduled fault and what became of it. */
interface FaultRun {
  readonly at: number;
  readonly what: string;
  readonly inject: (sim: Simulator) => void | Promise<void>;
  startedAt?: number;
  recoveredAt?: number;
  /** What the reflector went through on the way back (`backoff (server)`, `relisting (expired)`). */
  readonly path: string[];
  watchesBefore?: number;
  relistsBefore?: number;
  relistsAfter?: number;
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks `done` every 50 ms until it holds or `ms` have passed. */
async function poll(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await wait(50);
}

/** True while a fault that started has not recovered. */
const open = (faults: readonly FaultRun[]): boolean => faults.some((f) => f.startedAt !== undefined && f.recoveredAt === undefined);

/** The pod rewritten while a fault is open, to see changes arrive again. */
const PROBE = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', namespace: 'rxkube-demo' }, spec: { containers: [{ name: 'probe', image: 'probe' }] } } as const;
const PROBE_MS = 100;
let probes = 0;

/** Rewrites the probe pod while a fault waits for its recovery (directly in storage: it works while the server is down). */
async function probe(sim: Simulator, faults: readonly FaultRun[]): Promise<void> {
  if (!open(faults)) return;
  const current = sim.server.get<KubeObject>('v1/pods', PROBE.metadata.namespace, PROBE.metadata.name);
  const body = { ...PROBE, metadata: { ...PROBE.metadata, annotations: { 'rxkube.io/probe': String(++probes) } } };
  await (current === undefined ? sim.server.create('v1/pods', body) : sim.server.update('v1/pods', body));
}

function schedule(): FaultRun[] {
  const fault = (at: number, what: string, inject: FaultRun['inject']): FaultRun => ({ at, what, inject, path: [] });
  return [
    fault(0.2, 'every watch closed by the server', (sim) => sim.server.faults.closeWatches()),
    fault(0.35, 'a malformed line written into the watch', (sim) => void sim.server.faults.inject({ type: 'malformedLine' }, { verb: 'watch' })),
    fault(0.5, 'every connection reset mid-stream', (sim) => sim.server.faults.resetConnections()),
    fault(0.6, '429 Too Many Requests on the next watch', (sim) => {
      sim.server.faults.inject({ type: 'status', status: 429, retryAfterSeconds: 1 }, { verb: 'watch' });
      sim.server.faults.closeWatches();
    }),
    fault(0.75, 'the server down for a second, its history compacted', async (sim) => {
      sim.server.stop();
      await wait(1_000);
      sim.server.compact();
      await sim.server.restart();
    }),
  ];
}

/**
 * Runs the demo and prints its summary.
 *
 * @param opts duration and churn rate.
 * @returns the exit code: 0 when every fault was recovered and the cache matched the server.
 */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const out = process.stdout;
  const c = coloursFor(out);
  const sim = await startSimulator(resolveResource('v1/pods'), { objects: 200, churnPerSecond: opts.perSecond, seed: 7 });
  const session = new WatchSession({ kc: sim.kc, resource: resolveResource('v1/pods'), namespace: undefined, labelSelector: undefined, fieldSelector: undefined, backoff: { initialMs: 200, maxMs: 2_000 } });
  const screen = out.isTTY === true ? liveScreen(out) : undefined;
  const log: string[] = [];
  const note = (line: string): void => {
    if (screen === undefined) writeText(out, `${line}\n`);
    else log.push(line);
  };
  note(`simulator listening on ${sim.server.url}: 200 pods in 4 namespaces, ${opts.perSecond} writes/s once synced`);

  // The example handler: a reconciler that counts ready pods per node. Its coalescing buffer keeps one pending
  // notification per pod, so however far it falls behind its memory stays bounded by the number of pods.
  const readyByNode = new Map<string, number>();
  let reconciled = 0;
  // The handler's buffer drains within milliseconds, so a depth read once a second is nearly always 0: the depth is
  // sampled at each event and each status instead, and each status line shows the deepest since the line before.
  let deepest = 0;
  let deepestSinceLine = 0;
  const registration = session.informer.addHandler(
    {
      add: (pod) => reconcile(pod, 1),
      update: (old, pod) => {
        reconcile(old, -1);
        reconcile(pod, 1);
      },
      delete: (pod) => {
        const last = unwrapTombstone(pod);
        if (last !== undefined) reconcile(last, -1);
      },
    },
    { buffer: { coalesce: 'byKey' } },
  );
  function reconcile(pod: KubeObject, sign: 1 | -1): void {
    const p = pod as KubeObject & { spec?: { nodeName?: string }; status?: { phase?: string } };
    if (p.status?.phase !== 'Running') return;
    const node = p.spec?.nodeName ?? '<unscheduled>';
    readyByNode.set(node, (readyByNode.get(node) ?? 0) + sign);
    if (sign === 1) reconciled++;
  }

  const sampleDepth = (depth: number): void => {
    deepest = Math.max(deepest, depth);
    deepestSinceLine = Math.max(deepestSinceLine, depth);
  };

  const faults = schedule();
  let started = 0;
  const subs: Subscription[] = [];
  const stopped = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  let probing: NodeJS.Timeout | undefined;
  // A fault is recovered when a change made after it reaches the cache through a watch opened after it ('watching'
  // alone is only a request). The probe pod, in a namespace the churn leaves alone, is that change: it is rewritten
  // every PROBE_MS while a fault is open, so recovery is seen even once the churn has stopped.
  const checkRecovery = (e: InformerEvent<KubeObject>): void => {
    sampleDepth(registration.depth);
    const r = session.reflector;
    if (r?.state !== 'watching' || e.type !== 'update' || e.obj.metadata?.name !== PROBE.metadata.name) return;
    for (const f of faults) {
      if (f.startedAt === undefined || f.recoveredAt !== undefined || r.counters.watches <= (f.watchesBefore ?? 0)) continue;
      f.recoveredAt = Date.now();
      f.relistsAfter = r.counters.relists;
      note(c.green(`  recovered from "${f.what}" in ${duration(f.recoveredAt - f.startedAt)}`));
    }
  };
  session.start(
    checkRecovery,
    (err, fatal) => {
      if (screen === undefined) note(c.dim(`  reported: ${err.name}: ${err.message.replace(/\s+/g, ' ').slice(0, 100)}`));
      if (fatal) stopped.abort();
    },
  );
  subs.push(
    session.informer.status$.subscribe((s) => {
      for (const h of s.handlers) sampleDepth(h.depth);
      const r = s.reflector;
      if (r === undefined) return;
      for (const f of faults) {
        if (f.startedAt === undefined || f.recoveredAt !== undefined) continue;
        if (r.state === 'backoff') f.path.push(`backoff (${r.kind})`);
        else if (r.state === 'relisting') f.path.push(`relist (${r.reason})`);
      }
    }),
  );

  try {
    await session.informer.whenSynced({ timeout: 15_000 });
    started = Date.now();
    note(`synced ${session.informer.store.listKeys().length} pods in ${duration(session.syncedAfterMs ?? 0)}; churn and faults for ${duration(opts.durationMs)}`);
    sim.startChurn();
    probing = setInterval(() => void probe(sim, faults).catch((err: unknown) => note(c.red(`  probe write failed: ${printable(String(err))}`))), PROBE_MS);
    for (const f of faults) {
      timers.push(
        setTimeout(() => {
          f.startedAt = Date.now();
          f.watchesBefore = session.reflector?.counters.watches ?? 0;
          f.relistsBefore = session.reflector?.counters.relists ?? 0;
          note(c.yellow(`fault: ${f.what}`));
          void Promise.resolve(f.inject(sim)).catch((err: unknown) => note(c.red(`  the fault could not be injected: ${printable(String(err))}`)));
        }, f.at * opts.durationMs),
      );
    }
    const draw = (): void => {
      if (screen !== undefined) screen.draw(renderView(session, { colors: c, width: screen.width, height: screen.height - 1, now: Date.now(), notes: log.slice(-6) }));
      else {
        note(`t=${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s cache=${session.informer.store.listKeys().length} server=${sim.server.list('v1/pods').length} live events/s=${session.rate().toFixed(0)} lists=${session.reflector?.counters.lists ?? 0} watches=${session.reflector?.counters.watches ?? 0} errors=${session.errors} handler depth max=${deepestSinceLine}`);
        deepestSinceLine = registration.depth;
      }
    };
    timers.push(setInterval(draw, screen === undefined ? 1_000 : 250));
    timers.push(setTimeout(() => stopped.abort(), timerDelay(opts.durationMs)));
    const why = await interrupted(stopped.signal);
    for (const t of timers) clearTimeout(t);
    sim.stopChurn();
    // Faults still open get their time to heal, unless the user is waiting (Ctrl-C).
    await poll(() => !open(faults), why === 'done' ? 10_000 : 0);
    clearInterval(probing);
    // Let the informer catch up with the last writes, comparing object by object: the poll compares at least once,
    // and its last comparison is the one the summary reports.
    let mismatches: readonly string[] = [];
    const matches = (): boolean => {
      mismatches = compare(session.informer.store.list(), sim.server.list<KubeObject>('v1/pods'));
      return mismatches.length === 0;
    };
    await poll(matches, why === 'done' ? 10_000 : 2_000);
    // A last status line, so the lines cover the whole run and their deepest buffer is the summary's.
    draw();
    screen?.done();
    return summarise({ session, faults, mismatches, reconciled, deepest, interrupted: why !== 'done', print: (l) => writeText(out, `${l}\n`), c });
  } finally {
    clearInterval(probing);
    for (const t of timers) clearTimeout(t);
    for (const s of subs) s.unsubscribe();
    registration.unsubscribe();
    await registration.done;
    session.stop();
    await sim.close();
  }
}

/** Where cache and server disagree on a key or a resourceVersion. */
function compare(cached: readonly KubeObject[], onServer: readonly KubeObject[]): string[] {
  const key = (p: KubeObject): string => `${p.metadata?.namespace}/${p.metadata?.name}`;
  const want = new Map(onServer.map((p) => [key(p), p.metadata?.resourceVersion]));
  const diff: string[] = [];
  for (const p of cached) {
    const rv = want.get(key(p));
    if (rv === undefined) diff.push(`${key(p)} cached but deleted on the server`);
    else if (rv !== p.metadata?.resourceVersion) diff.push(`${key(p)} cached at ${p.metadata?.resourceVersion}, server at ${rv}`);
    want.delete(key(p));
  }
  for (const k of want.keys()) diff.push(`${k} missing from the cache`);
  return diff;
}

/** Prints the summary; returns the exit code. */
function summarise(r: {
  session: WatchSession;
  faults: readonly FaultRun[];
  mismatches: readonly string[];
  reconciled: number;
  deepest: number;
  interrupted: boolean;
  print: (line: string) => void;
  c: ReturnType<typeof coloursFor>;
}): number {
  const { session: s, c, print } = r;
  const counters = s.reflector?.counters;
  print('');
  print(c.bold('summary'));
  print(`  events: ${s.adds} adds, ${s.updates} updates, ${s.deletes} deletes; lists ${counters?.lists ?? 0} (relists ${counters?.relists ?? 0}), watches ${counters?.watches ?? 0} (reconnects ${s.reconnects}), ${s.errors} errors reported and survived`);
  print(`  handler: ${r.reconciled} reconciles of running pods, deepest buffer ${r.deepest} (coalesced by key)`);
  let unrecovered = 0;
  for (const f of r.faults) {
    if (f.startedAt === undefined) {
      print(`  fault "${f.what}": not reached${r.interrupted ? ' (interrupted)' : ''}`);
      continue;
    }
    if (f.recoveredAt === undefined) {
      unrecovered++;
      print(c.red(`  fault "${f.what}": NOT recovered`));
      continue;
    }
    const relisted = (f.relistsAfter ?? 0) > (f.relistsBefore ?? 0);
    const via = [...new Set(f.path)].join(', then ');
    const how = relisted ? `relisted and re-watched${via === '' ? '' : ` after ${via}`}` : `re-watched from the last resourceVersion, no relist${via === '' ? '' : ` (after ${via})`}`;
    print(`  fault "${f.what}": recovered in ${duration(f.recoveredAt - f.startedAt)}: ${how}`);
  }
  const cached = s.informer.store.listKeys().length;
  const matched = r.mismatches.length === 0;
  print(
    matched
      ? c.green(`  cache ${cached} objects, server ${cached} objects: the cache matches the server`)
      : c.red(`  cache ${cached} objects: MISMATCH with the server: ${r.mismatches.slice(0, 5).join('; ')}`),
  );
  return matched && unrecovered === 0 ? 0 : 1;
}
