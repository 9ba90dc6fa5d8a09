import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { controller, informer, isInvalid, kubeSource, KubeApiError, objectClient, runManager, setErrorReporter, type KubeObject, type ManagerEvent } from 'rxkube';
import { Rng } from '../helpers/random.js';
import { waitFor, WaitTimeoutError } from '../helpers/waitFor.js';
import { checkError, type ErrorProblem } from './checks.js';
import { describeBehaviour, drawPlan } from './plan.js';
import { GROUP, HostileServer, NAMESPACE, type Widget } from './server.js';

/**
 * One seed of the hostile-server tier, in the process that runs it (a child
 * of the runner, so a crash is observed, not suffered): the hostile server,
 * and against it an informer, a controller that applies an annotation to
 * every widget through the same server, and the manager running both with
 * probe and metrics ports that get malformed requests. The seed's plan
 * runs (the hostile phase), the server heals, and the cache and the
 * controller's writes must match the server within the bound.
 */

export const HOSTILE = Object.freeze({
  /** The hostile phase ends when every planned answer was taken, or after this long. */
  hostileMs: 10_000,
  /**
   * After healing, the cache must equal the server's objects, and every widget carry the controller's annotation, within
   * this: longer than the client's own deadline on a watch the server never ends (minWatchTimeoutSeconds below, at
   * most 2 × 4 s, plus 30 s of grace, HI-60), since an endless watch may have begun just before healing.
   */
  convergeMs: 45_000,
  /** The reflector's minWatchTimeoutSeconds: watches of 4–8 s, as the server itself also cuts them (MAX_WATCH_MS). */
  minWatchTimeoutSeconds: 4,
  /** kubeSource's idle timeout, scaled down as in the chaos suite, so a silent request ends within a seed. */
  idleTimeoutMs: 3000,
  /**
   * The reflector's longest backoff, scaled down with the idle timeout (its default is 30 s, doubled by jitter), so
   * that missing the convergence bound means deaf, not a designed wait that was still running.
   */
  backoffMaxMs: 5000,
  /**
   * kubeSource's maxListBytes, scaled down from its 2 GiB default (sized for a real 150,000-pod list) so that a
   * list that never ends is refused within the seed's memory bound (HI-92) rather than held up to 2 GiB.
   */
  maxListBytes: 64 * 1024 * 1024,
  /** kubeSource's list deadline, scaled down from 120 s as the idle timeout is: a trickled list ends within the seed. */
  listTimeoutMs: 5000,
  /** objectClient's per-call timeout. */
  writeTimeoutMs: 5000,
  /** Malformed requests sent to the probe and metrics ports during the hostile phase. */
  portRequests: 12,
});

const SEEN = `${GROUP}/seen`;

/** What a seed reports to its runner, as one JSON line. */
export interface SeedOutcome {
  readonly seed: number;
  readonly token: string;
  readonly behaviours: readonly string[];
  readonly taken: readonly string[];
  readonly problems: readonly ErrorProblem[];
  readonly errors: Readonly<Record<string, number>>;
  readonly maxRssMiB: number;
  readonly requests: Readonly<Record<string, number>>;
}

/** Malformed requests for the runner's ports; the dedicated request fuzzer goes much further. */
const PORT_REQUESTS = [
  'GET //[ HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET //x:99999/ HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /healthz HTTP/9.9\r\n\r\n',
  'FOO /metrics HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /readyz?verbose=\u001b[2J HTTP/1.1\r\nHost: x\r\n\r\n',
  `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
  '\u0000\u0001\u0002 / HTTP/1.1\r\n\r\n',
  'GET /healthz\r\n\r\n',
  'GET /livez HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  `GET /${'%'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
] as const;

/** Sends raw bytes to a port and reads its status line (or until it closes, or 500 ms pass); never throws. */
async function poke(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    const done = (): void => {
      s.destroy();
      resolve(got.split('\r\n')[0] ?? '');
    };
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) done();
    });
    s.on('error', done);
    s.on('close', done);
    s.setTimeout(500, done);
  });
}

function kubeConfig(port: number, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hostile', server: `http://127.0.0.1:${port}`, skipTLSVerify: false }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'hostile', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

type W = KubeObject & { spec?: { v?: unknown } };

/**
 * Runs one seed in this process and returns what it found (problems empty: it passed). Each problem, each
 * hostile answer the server gives and each error reported is also passed to `report` at once, so a runner still learns them if the
 * process dies later in the seed.
 */
export async function runHostileSeed(seed: number, report: (line: { problem: ErrorProblem } | { taken: string } | { error: string }) => void = () => undefined): Promise<SeedOutcome> {
  const plan = drawPlan(seed);
  const token = `fuzz-token-${seed}-${randomBytes(8).toString('hex')}`;
  const problems: ErrorProblem[] = [];
  const push = problems.push.bind(problems);
  problems.push = (...ps: ErrorProblem[]): number => {
    for (const p of ps) report({ problem: p });
    return push(...ps);
  };
  const errorCounts: Record<string, number> = {};
  let stopping = false;
  const seen = (err: unknown, where: string): void => {
    if (stopping) return;
    const name = err instanceof Error ? err.constructor.name : typeof err;
    errorCounts[name] = (errorCounts[name] ?? 0) + 1;
    const message = err instanceof Error ? err.message : String(err);
    report({ error: `${where}: ${name}: ${message.length > 200 ? `${message.slice(0, 200)}…` : message}`.replaceAll(token, '<TOKEN>') });
    problems.push(...checkError(err, where, [token]));
  };
  setErrorReporter((err) => seen(err, 'default reporter'));
  const onWarning = (w: Error): void => void problems.push({ group: `process warning ${w.name}`, detail: w.message });
  process.on('warning', onWarning);

  const server = new HostileServer(plan, (taken) => report({ taken }));
  const port = await server.listen();
  const kc = kubeConfig(port, token);
  const resource = { group: GROUP, version: 'v1', plural: 'widgets', namespaced: true } as const;
  const inf = informer<W>(kubeSource<W>(kc, resource, { idleTimeoutMs: HOSTILE.idleTimeoutMs, maxListBytes: HOSTILE.maxListBytes, listTimeoutMs: HOSTILE.listTimeoutMs }), { reflector: { backoff: { maxMs: HOSTILE.backoffMaxMs }, minWatchTimeoutSeconds: HOSTILE.minWatchTimeoutSeconds } });
  const subs = [inf.errors$.subscribe((e) => seen(e, 'informer errors$'))];
  const widgets = objectClient<W>(kc, resource, { namespace: NAMESPACE, fieldManager: 'fuzz', timeoutMs: HOSTILE.writeTimeoutMs });
  const stop = new AbortController();
  const ctl = controller<W>({
    for: inf,
    reconcile: async (w) => {
      try {
        await widgets.apply({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: w.metadata?.name as string, annotations: { [SEEN]: String(w.spec?.v) } } }, { force: true });
      } catch (err) {
        seen(err, 'objectClient.apply');
        throw err;
      }
    },
    signal: stop.signal,
  });
  const events: ManagerEvent[] = [];
  const exited = runManager({
    controllers: [ctl],
    healthProbeBindAddress: '127.0.0.1:0',
    metricsBindAddress: '127.0.0.1:0',
    metrics: { contentType: 'text/plain', metrics: async () => 'fuzz_up 1\n' },
    signal: stop.signal,
    signals: [],
    onEvent: (e) => events.push(e),
  });

  const workload = new AbortController();
  const writes = server.runWorkload(workload.signal);
  await waitFor(() => server.planTaken, 'every planned answer to be taken', HOSTILE.hostileMs, { everyMs: 20 }).catch((err: unknown) => {
    if (!(err instanceof WaitTimeoutError)) throw err;
  });
  workload.abort();
  await writes;
  server.heal();

  const cacheDiff = (): string[] => {
    const want = server.state();
    const have = new Map(inf.store.list().map((o) => [`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o.metadata?.resourceVersion]));
    const diff: string[] = [];
    for (const [k, rv] of want) if (have.get(k) !== rv) diff.push(`${JSON.stringify(k)} server rv ${rv}, cache ${String(have.get(k))}`);
    for (const k of have.keys()) if (!want.has(k)) diff.push(`${JSON.stringify(k)} in the cache only`);
    return diff;
  };
  const unreconciled = (): string[] => server.objects().filter((o: Widget) => o.metadata.annotations?.[SEEN] !== String(o.spec['v'])).map((o) => o.metadata.name);
  // A 400 or 422 to a list is final by design (the informer fails, the runner exits 1 for the pod to restart): what
  // is checked then is that it was reported typed, not that a cache that stopped for good caught up.
  const finalByDesign = (): boolean => {
    const s = inf.status();
    return s.state === 'failed' && s.lastError instanceof KubeApiError && (s.lastError.status === 400 || isInvalid(s.lastError));
  };
  let converged = true;
  await waitFor(() => finalByDesign() || (cacheDiff().length === 0 && unreconciled().length === 0), 'the cache and the writes to match the server', HOSTILE.convergeMs, { everyMs: 50 }).catch((err: unknown) => {
    if (!(err instanceof WaitTimeoutError)) throw err;
    converged = false;
  });
  const final = finalByDesign();
  if (!converged) {
    const diff = cacheDiff();
    const status = inf.status();
    const held = server.held.length > 0 ? `; hostile answers still held open: ${server.held.join(', ')}` : '';
    const state = `informer ${status.state}/${status.reflector?.state ?? 'none'}, synced ${String(status.synced)}`;
    // The group names the reflector's state and what the server still holds open, which is what tells the causes apart.
    const kinds = [...new Set(server.held.map((h) => h.split(' ').slice(0, 2).join(' ')))].sort().join(', ');
    const why = `${state}${kinds === '' ? '' : `, still held: ${kinds}`}`;
    if (diff.length > 0) problems.push({ group: `cache did not match the server after healing (${why})`, detail: `${diff.length} keys differ (${diff.slice(0, 3).join('; ')}); ${state}${held}` });
    else {
      const first = server.objects().find((o) => o.metadata.name === unreconciled()[0]);
      const shown = JSON.stringify({ annotations: first?.metadata.annotations, spec: first?.spec }).slice(0, 200);
      problems.push({ group: `controller writes did not land after healing (${why})`, detail: `${unreconciled().length} widgets without their annotation (${unreconciled().slice(0, 3).join(', ')}; the first on the server: ${shown}); ${state}${held}` });
    }
  }
  // The runner's ports get their malformed requests once the informer's verdict is in, so a port that kills the
  // process (a finding of its own) does not hide what the informer met.
  const portRng = new Rng(plan.workloadSeed ^ 0x5eed);
  const open = events.flatMap((e) => (e.type === 'serving' ? [e.port] : []));
  if (open.length < 2) problems.push({ group: 'the runner did not serve its ports', detail: `serving events: ${open.length}` });
  // A runner whose source failed for good has stopped its ports on purpose.
  for (let i = 0; i < HOSTILE.portRequests && open.length > 0 && !final; i++) await poke(portRng.pick(open), portRng.pick(PORT_REQUESTS));
  for (const p of final ? [] : open) {
    const line = await poke(p, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    if (!line.startsWith('HTTP/1.1 ')) problems.push({ group: 'a runner port stopped answering', detail: `port ${p} answered ${JSON.stringify(line)} to a plain GET /healthz after the malformed requests` });
  }

  stopping = true;
  stop.abort();
  await exited;
  for (const s of subs) s.unsubscribe();
  await server.close();
  process.off('warning', onWarning);
  setErrorReporter(undefined);
  return {
    seed,
    token,
    behaviours: plan.behaviours.map(describeBehaviour),
    taken: server.taken,
    problems,
    errors: errorCounts,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    requests: server.requests,
  };
}
