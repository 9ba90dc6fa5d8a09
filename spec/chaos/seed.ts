import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import {
  BufferOverflowError,
  informer,
  isForbidden,
  isNotFound,
  isUnauthorized,
  KubeApiError,
  kubeSource,
  type Informer,
  type KubeObject,
  type Registration,
} from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import type { Subscription } from 'rxjs';
import { CHAOS } from './config.js';
import { FAULT_KINDS, faultKind, type FaultContext, type FaultKind } from './faults.js';
import { Rng } from '../helpers/random.js';
import { waitFor, WaitTimeoutError } from '../helpers/waitFor.js';
import { isSubsequence, storeDiff, View, type ViewKind } from './views.js';
import { Workload, type State } from './workload.js';

/**
 * Errors an informer may report while faults are injected; anything else on `errors$` fails the seed.
 * API answers count except a refused identity or a missing resource, which no injected fault causes.
 */
const expectedError = (err: Error): boolean =>
  err instanceof KubeApiError ? !isUnauthorized(err) && !isForbidden(err) && !isNotFound(err) : EXPECTED_ERRORS.has(err.name);
const EXPECTED_ERRORS = new Set([
  'ConnectionError',
  'DecodeError',
  'VeryShortWatchError',
  'WatchStalledError',
  'WatchDeadlineExceededError',
  'InitialEventsIncompleteError',
]);

/** What one seed did and found. */
export interface SeedResult {
  readonly seed: number;
  /** Why the seed failed; empty when it passed. */
  readonly failures: readonly string[];
  /** The fault measured alone at the end, and the time from it to convergence (undefined: not within the bound). */
  readonly probe: { readonly kind: string; readonly stall: boolean; readonly convergedMs: number | undefined; readonly taken: boolean };
  /** The random phase: its last fault, and the time from it to convergence. */
  readonly mixed: { readonly lastKind: string; readonly convergedMs: number | undefined };
  /** Faults caused, by kind (the random phase and the probe). */
  readonly faults: Readonly<Record<string, number>>;
  /** Armed faults no request or event took before they were disarmed. */
  readonly untaken: number;
  readonly ops: number;
  /** Errors the informers reported, by name. */
  readonly errors: Readonly<Record<string, number>>;
  /** Reflector relists and watches opened, both informers. */
  readonly relists: number;
  readonly watches: number;
  /** Notifications the dropOldest handlers lost (and had reported). */
  readonly dropped: number;
  readonly durationMs: number;
}

/** Options of {@link runSeed}. */
export interface SeedOptions {
  /** The fault kind to measure alone at the end. @default chosen by the seed, every kind in turn */
  readonly probe?: string;
}

/** The consumers attached to one informer under test. */
interface Subject {
  readonly name: string;
  readonly informer: Informer<KubeObject>;
  readonly expected: (s: { all: State; selected: State }) => State;
  readonly views: Map<ViewKind, View>;
  readonly registrations: Map<ViewKind, Registration>;
  readonly subscriptions: Subscription[];
  /** Keys of notifications the dropOldest buffer dropped, as its BufferOverflowErrors said. */
  readonly droppedKeys: Set<string>;
  dropped: number;
  state: string;
  relists: number;
  watches: number;
}

const now = (): number => performance.now();

/**
 * The time `condition` first held, checking every 10 ms, or undefined if it did not by `deadline`: a seed records
 * what did not converge and goes on to report it rather than stopping at the first wait.
 */
async function heldAt(condition: () => boolean, what: string, deadline: number): Promise<number | undefined> {
  try {
    await waitFor(condition, what, Math.max(0, deadline - now()), { everyMs: 10 });
    return now();
  } catch (err) {
    if (err instanceof WaitTimeoutError) return undefined;
    throw err;
  }
}

function firstFew(lines: readonly string[]): string {
  return lines.length <= 5 ? lines.join('; ') : `${lines.slice(0, 5).join('; ')} … (${lines.length} in all)`;
}

/**
 * Runs one seed: a simulator with objects over 1k keys, two informers (every
 * pod, and a label selector) each with a subscriber and a handler under every
 * buffer policy, a random workload with random faults, then one fault kind
 * measured alone; checks that stores and handlers' views equal the server's
 * state and that nothing stays open after the last unsubscribe.
 *
 * Everything the seed decides comes from its PRNG; what the network and the
 * scheduler do with it does not, so a replay repeats the plan, not every
 * interleaving.
 */
export async function runSeed(seed: number, opts: SeedOptions = {}): Promise<SeedResult> {
  const started = now();
  const rng = new Rng(seed);
  const workRng = rng.fork();
  const faultRng = rng.fork();
  const nudgeRng = rng.fork();
  // Warm-up writes are paced by the clock, so their number varies: they draw from their own stream.
  const warmRng = rng.fork();
  const probeKind: FaultKind = opts.probe !== undefined ? faultKind(opts.probe) : (FAULT_KINDS[seed % FAULT_KINDS.length] as FaultKind);
  const failures: string[] = [];
  const faults: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let untaken = 0;
  let ops = 0;
  let mixed: SeedResult['mixed'] = { lastKind: 'none', convergedMs: undefined };
  let probe: SeedResult['probe'] = { kind: probeKind.name, stall: probeKind.stall, convergedMs: undefined, taken: false };
  const subjects: Subject[] = [];

  const server: ApiServer = await startApiServer({ bookmarkIntervalMs: CHAOS.bookmarkIntervalMs });
  const workload = new Workload(server);
  let heartbeat: NodeJS.Timeout | undefined;
  try {
    workload.populate(workRng, CHAOS.initialObjects);
    await server.create('v1/configmaps', { metadata: { name: 'heartbeat', namespace: 'default' }, data: { beat: '0' } });
    let beats = 0;
    heartbeat = setInterval(() => {
      server.patch('v1/configmaps', 'default', 'heartbeat', { data: { beat: String(++beats) } }).catch((err: unknown) => failures.push(`heartbeat write refused: ${String(err)}`));
    }, CHAOS.heartbeatMs);

    const kc = server.kubeConfig();
    const reflector = { minWatchTimeoutSeconds: CHAOS.minWatchTimeoutSeconds, stallDetection: CHAOS.stallDetection };
    const make = (name: string, labelSelector: string | undefined, expected: Subject['expected']): Subject => {
      const source = kubeSource(kc, 'v1/pods', { idleTimeoutMs: CHAOS.idleTimeoutMs, ...(labelSelector !== undefined && { labelSelector }) });
      const inf = informer(source, { name, reflector }) as unknown as Informer<KubeObject>;
      const subject: Subject = { name, informer: inf, expected, views: new Map(), registrations: new Map(), subscriptions: [], droppedKeys: new Set(), dropped: 0, state: 'idle', relists: 0, watches: 0 };
      subject.subscriptions.push(
        inf.errors$.subscribe((err) => {
          const kind = err instanceof KubeApiError ? `${err.name} ${err.status}` : err.name;
          errors[kind] = (errors[kind] ?? 0) + 1;
          if (err instanceof BufferOverflowError && err.droppedKey !== undefined) {
            subject.dropped++;
            subject.droppedKeys.add(err.droppedKey);
          } else if (!expectedError(err)) failures.push(`${name}: unexpected ${err.name} on errors$: ${err.message}`);
        }),
        inf.status$.subscribe((s) => {
          subject.state = s.state;
          if (s.reflector !== undefined) {
            subject.relists = s.reflector.counters.relists;
            subject.watches = s.reflector.counters.watches;
          }
        }),
      );
      const observer = new View(`${name}/observer`, 'observer', inf.store);
      subject.views.set('observer', observer);
      subject.subscriptions.push(inf.subscribe({ next: (e) => observer.apply(e), error: (err: unknown) => failures.push(`${name}: the informer's stream errored: ${String(err)}`) }));
      const policies: [ViewKind, boolean, Parameters<Informer<KubeObject>['addHandler']>[1]][] = [
        ['unbounded', false, { buffer: 'unbounded' }],
        ['coalesce', true, { buffer: { coalesce: 'byKey' } }],
        ['limit-error', false, { buffer: { limit: CHAOS.errorLimit, overflow: 'error' } }],
        ['dropOldest', true, { buffer: { limit: CHAOS.dropOldestLimit, overflow: 'dropOldest' } }],
      ];
      for (const [kind, slow, handlerOpts] of policies) {
        const view = new View(`${name}/${kind}`, kind);
        subject.views.set(kind, view);
        subject.registrations.set(kind, inf.addHandler(view.handler(slow), handlerOpts));
      }
      return subject;
    };
    subjects.push(make('all', undefined, (s) => s.all), make('selected', CHAOS.labelSelector, (s) => s.selected));
    const [all] = subjects as [Subject, Subject];
    await Promise.all(subjects.map((s) => s.informer.whenSynced({ timeout: 15_000 })));

    const ctx: FaultContext = { server, rng: faultRng, informers: subjects.length, touch: () => workload.touchMatching(nudgeRng) };
    let restarting: Promise<void> | undefined;
    let lastFaultAt = 0;
    const cause = (kind: FaultKind): void => {
      faults[kind.name] = (faults[kind.name] ?? 0) + 1;
      mixed = { lastKind: kind.name, convergedMs: undefined };
      const done = kind.cause(ctx);
      lastFaultAt = now();
      if (done instanceof Promise) {
        restarting = done.then(
          () => {
            lastFaultAt = now();
            restarting = undefined;
          },
          (err: unknown) => {
            failures.push(`${kind.name} failed: ${String(err)}`);
            restarting = undefined;
          },
        );
      }
    };
    /**
     * Nudges armed faults with writes until every one was taken, then disarms what is left: the time the last was
     * taken (undefined if none was armed) and how many never were.
     */
    const drainFaults = async (): Promise<{ at: number | undefined; left: number }> => {
      if (server.faults.pending() === 0) return { at: undefined, left: 0 };
      const deadline = now() + CHAOS.takeTimeoutMs;
      while (server.faults.pending() > 0 && now() < deadline) {
        workload.touchMatching(nudgeRng);
        ops++;
        await delay(20);
      }
      const left = server.faults.pending();
      untaken += left;
      server.faults.clear();
      return { at: now(), left };
    };
    const converge = async (from: number): Promise<{ ms: number | undefined; expected: { all: State; selected: State } }> => {
      const expected = workload.expected();
      const at = await heldAt(() => subjects.every((s) => storeDiff(s.informer.store, s.expected(expected)).length === 0), 'the stores to converge', from + CHAOS.ciBoundMs);
      if (at === undefined) {
        for (const s of subjects) {
          const diff = storeDiff(s.informer.store, s.expected(expected));
          if (diff.length > 0) failures.push(`${s.name}: store not equal to the server ${CHAOS.ciBoundMs} ms after the last fault: ${firstFew(diff)}`);
        }
      }
      return { ms: at === undefined ? undefined : at - from, expected };
    };

    // The probe: one fault alone on a synced, quiet system, then writes it must not miss. Before a stall, the
    // watches first run long enough for the reflector to learn their rhythm, as a long-running informer would have.
    if (probeKind.stall) {
      for (const end = now() + CHAOS.warmupMs; now() < end; ops++) {
        workload.step(warmRng);
        await delay(50);
      }
    }
    faults[probeKind.name] = (faults[probeKind.name] ?? 0) + 1;
    await probeKind.cause(ctx);
    const drained = await drainFaults();
    const t0 = drained.at ?? now();
    for (let i = 0; i < CHAOS.tailWrites; i++) {
      workload.step(workRng);
      ops++;
    }
    const afterProbe = await converge(t0);
    probe = { ...probe, convergedMs: afterProbe.ms, taken: drained.left === 0 };
    await checkViews(subjects, afterProbe.expected, failures, `after the ${probeKind.name} probe`);

    // The random phase: writes paced over chaosMs, faults at random points among them, a late handler somewhere.
    const total = workRng.int(CHAOS.minOps, CHAOS.maxOps);
    const faultAt = new Map<number, number>();
    for (let i = faultRng.int(CHAOS.minFaults, CHAOS.maxFaults); i > 0; i--) {
      const at = faultRng.int(0, total - 1);
      faultAt.set(at, (faultAt.get(at) ?? 0) + 1);
    }
    const lateAt = workRng.int(0, total - 1);
    const ticks = CHAOS.chaosMs / 10;
    const perTick = Math.ceil(total / ticks);
    for (let i = 0; i < total; i++) {
      if (i > 0 && i % perTick === 0) await delay(10);
      workload.step(workRng);
      ops++;
      for (let f = faultAt.get(i) ?? 0; f > 0; f--) {
        let kind = faultRng.pick(FAULT_KINDS);
        while (kind.name === 'restart' && restarting !== undefined) kind = faultRng.pick(FAULT_KINDS);
        cause(kind);
      }
      if (i === lateAt) {
        const view = new View('all/late', 'late');
        all.views.set('late', view);
        all.registrations.set('late', all.informer.addHandler(view.handler(false)));
      }
    }
    await restarting;
    lastFaultAt = lastFaultAt || now();
    const taken = await drainFaults();
    if (taken.at !== undefined) lastFaultAt = Math.max(lastFaultAt, taken.at);
    const afterChaos = await converge(lastFaultAt);
    mixed = { ...mixed, convergedMs: afterChaos.ms };
    await checkViews(subjects, afterChaos.expected, failures, 'after the random phase');

    for (const s of subjects) if (s.state !== 'running') failures.push(`${s.name}: the informer is ${s.state}, not running, before teardown`);
    if (workload.refused.length > 0) failures.push(`the simulator refused workload writes: ${firstFew(workload.refused)}`);
  } catch (err) {
    failures.push(`the seed threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    if (heartbeat !== undefined) clearInterval(heartbeat);
    server.faults.clear();
    await teardown(server, subjects, failures);
  }
  return {
    seed,
    failures,
    probe,
    mixed,
    faults,
    untaken,
    ops,
    errors,
    relists: subjects.reduce((n, s) => n + s.relists, 0),
    watches: subjects.reduce((n, s) => n + s.watches, 0),
    dropped: subjects.reduce((n, s) => n + s.dropped, 0),
    durationMs: now() - started,
  };
}

/** Waits for every handler to catch up with the store, then checks each view against the server's state and its contract. */
async function checkViews(subjects: readonly Subject[], expected: { all: State; selected: State }, failures: string[], when: string): Promise<void> {
  const deadline = now() + CHAOS.ciBoundMs;
  for (const s of subjects) {
    const want = s.expected(expected);
    const lossless = [...s.views.values()].filter((v) => v.kind !== 'dropOldest');
    const caughtUp = await heldAt(() => lossless.every((v) => v.diff(want).length === 0), 'the lossless views to catch up', deadline);
    if (caughtUp === undefined) {
      for (const v of lossless) {
        const diff = v.diff(want);
        if (diff.length > 0) failures.push(`${v.name}: view not equal to the server ${when}: ${firstFew(diff)}`);
      }
    }
    const unbounded = s.views.get('unbounded') as View;
    const lossy = s.views.get('dropOldest') as View;
    // Every notification the unbounded handler got, the dropOldest one either got, in the same order, or had reported dropped.
    const drained = await heldAt(() => lossy.log.length + s.dropped >= unbounded.log.length, 'the dropOldest view to drain', deadline);
    if (drained === undefined || lossy.log.length + s.dropped !== unbounded.log.length) {
      failures.push(`${lossy.name}: ${lossy.log.length} delivered + ${s.dropped} reported dropped ≠ ${unbounded.log.length} sent ${when}`);
    }
    if (!isSubsequence(lossy.log, unbounded.log)) failures.push(`${lossy.name}: its events are not the unbounded handler's in order with some left out ${when}`);
    const lossyDiff = lossy.diff(want, s.droppedKeys);
    if (lossyDiff.length > 0) failures.push(`${lossy.name}: keys it never had a drop for differ from the server ${when}: ${firstFew(lossyDiff)}`);
    for (const v of s.views.values()) failures.push(...v.breaches(s.droppedKeys).map((b) => `${b} (${when})`));
    for (const [kind, reg] of s.registrations) if (reg.closed) failures.push(`${s.name}/${kind}: the registration ended ${when}`);
  }
}

/** Removes every handler and subscriber, and checks that the informers closed their sockets and watches. */
async function teardown(server: ApiServer, subjects: readonly Subject[], failures: string[]): Promise<void> {
  try {
    for (const s of subjects) {
      for (const r of s.registrations.values()) r.unsubscribe();
      await Promise.all([...s.registrations.values()].map((r) => r.done));
      for (const sub of s.subscriptions) sub.unsubscribe();
    }
    const quiet = await heldAt(() => server.stats.connections === 0 && server.stats.watchesOpen === 0, 'sockets and watches to close', now() + CHAOS.teardownMs);
    if (quiet === undefined) {
      failures.push(`after the last unsubscribe, ${server.stats.connections} connections and ${server.stats.watchesOpen} watches were still open ${CHAOS.teardownMs} ms later`);
    }
  } finally {
    await server.close();
  }
}
