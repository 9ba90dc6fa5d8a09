import { BehaviorSubject, distinctUntilChanged, Observable, Subject, Subscription, takeUntil, type Subscriber } from 'rxjs';
import { abortInFlight } from '../controller/controller.js';
import type { ControllerSource } from '../controller/types.js';
import { reportError, toError } from '../errors/reportError.js';
import type { Informer } from '../informer/informer.js';
import { leaderElection } from '../leaderelection/leaderElection.js';
import type { LeaderElectionOptions } from '../leaderelection/options.js';
import { releaseLock } from '../leaderelection/release.js';
import { isInformer, liveness, readiness, render, type Check, type ProbedInformer, type ProbeView } from './health.js';
import { resolveManagerOptions, type ManagerEvent, type ManagerOptions, type ResolvedManagerOptions } from './options.js';
import { listen, TEXT, type Answer, type Listening, type Route } from './servers.js';
import { syncedOf } from '../informer/syncedOf.js';
import { provisionedPairs } from './certificates/provision.js';
import type { TlsPair } from './certificates/tlsPair.js';
import { certDirPairs } from './certDir.js';
import { WebhookRecorder } from './webhookMetrics.js';
import { listenWebhooks } from './webhookServer.js';
import { MetricsGate } from './metricsAuth.js';
import { metricsPairs } from './metricsPairs.js';

/** The manager's sources, each once: informers get probed, other controller sources only counted as synced or not. */
interface Sources {
  readonly all: readonly ControllerSource<unknown>[];
  readonly informers: readonly (ControllerSource<unknown> & ProbedInformer)[];
}

function collectSources(c: ResolvedManagerOptions): Sources {
  const all = [...new Set<ControllerSource<unknown>>([...c.controllers.flatMap((ctl) => ctl.sources), ...c.informers])];
  return { all, informers: all.filter(isInformer) };
}

/**
 * The runner of a controller process, controller-runtime's manager in the
 * project's shape: an Observable whose subscription is the process's
 * lifetime. Subscribing starts the probe and metrics servers and the HTTPS
 * webhook server (when `webhooks` are given; on every replica, leading or
 * not), keeps every informer the controllers read running (so a standby's
 * caches are warm), and runs the controllers — at once, or while this
 * replica holds the lock of `leaderElection`. It emits where it serves, leadership changes and
 * every reconcile outcome.
 *
 * It ends in one of two ways (docs/semantics.md, MG-1…MG-10):
 * - **gracefully**, when `signal` aborts (SIGTERM in a pod) or a controller
 *   was shut down: `/readyz` turns 503, the controllers stop taking work and
 *   finish what is in flight (each within its `shutdownTimeoutMs`), then the
 *   Lease is released so a standby takes over at once, then the informers
 *   and servers stop, and the Observable **completes**;
 * - **fatally**, when a source failed for good, a server cannot listen, or
 *   this replica lost the lock after leading: the Observable **errors**
 *   (after the same drain; at once for a lost lock, since another replica
 *   may already be leading, and without releasing it).
 *
 * Why an Observable and not a promise: every other lifetime in rxkube is a
 * subscription, the events (outcomes, the actual ports of `:0`) need a
 * stream anyway, and unsubscribing is the same graceful stop in the
 * background. {@link runManager} is the thin promise for `main()`: it wires
 * SIGTERM and SIGINT and resolves the exit code. Subscribe once: each
 * subscription is a separate run that binds the same addresses.
 *
 * ## Example
 * ```ts
 * import { controller, informer, kubeSource, leaseLock, loadKubeConfig, manager, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * const kc = loadKubeConfig(); // in-cluster in a pod, else ~/.kube/config
 * const c = controller({ for: informer(kubeSource(kc, 'apps/v1/deployments')), reconcile, reconcileTimeoutMs: 60_000 });
 * const stop = new AbortController();
 * process.once('SIGTERM', () => stop.abort());
 * manager({
 *   controllers: [c],
 *   leaderElection: { lock: leaseLock(kc, { namespace: 'ops', name: 'my-controller' }) },
 *   signal: stop.signal,
 * }).subscribe({
 *   next: (e) => e.type === 'reconcile' && console.log(e.controller, e.outcome.type, e.outcome.key),
 *   complete: () => process.exit(0),
 *   error: (err) => {
 *     console.error(err);
 *     process.exit(1);
 *   },
 * });
 * ```
 *
 * @param opts the controllers, extra informers, leader election, servers and probe limits.
 * @returns the manager, idle until subscribed.
 * @throws {TypeError} when an option is missing or invalid (a bind address such as `localhost:99999` included).
 */
export function manager(opts: ManagerOptions): Observable<ManagerEvent> {
  const c = resolveManagerOptions(opts);
  const sources = collectSources(c);
  // Whether this replica leads, for the metrics object and the certificates' provisioner; across runs, so it is registered once.
  const leading$ = new BehaviorSubject<boolean>(c.leaderElection === undefined);
  // The webhook server's counts, across runs as the controllers' are.
  const webhookRecorder = new WebhookRecorder(c.webhooks.map((w) => w.path));
  let registered = false;
  return new Observable<ManagerEvent>((subscriber) => {
    if (!registered) {
      registered = true;
      registerMetrics(c, sources, leading$, webhookRecorder);
    }
    const run = new ManagerRun(c, sources, subscriber, leading$, webhookRecorder);
    run.start();
    return () => run.unsubscribed();
  });
}

/** Hands the metrics object everything it can export (MG-8). */
function registerMetrics(c: ResolvedManagerOptions, sources: Sources, leading$: BehaviorSubject<boolean>, webhooks: WebhookRecorder): void {
  const m = c.metrics;
  if (m === undefined) return;
  for (const ctl of c.controllers) m.addController?.(ctl);
  for (const i of sources.informers) m.addInformer?.(i as unknown as Informer<unknown>);
  if (c.leaderElection !== undefined) m.addLeaderElection?.(c.leaderElection.lock.describe(), leading$.pipe(distinctUntilChanged()));
  if (c.webhooks.length > 0) m.addWebhooks?.({ metrics: () => webhooks.snapshot() });
}

/** One subscription's run, from the servers listening to the last of them closing. */
class ManagerRun {
  readonly #c: ResolvedManagerOptions;
  readonly #sources: Sources;
  readonly #out: Subscriber<ManagerEvent>;
  readonly #leading$: BehaviorSubject<boolean>;
  readonly #webhookRecorder: WebhookRecorder;
  // Informer subscriptions (and the sync state of other sources), held from start to the end: warm caches on a standby too.
  readonly #caches = new Subscription();
  // The controllers' subscriptions, while they run here.
  readonly #controllers = new Subscription();
  // The candidacy; unsubscribing stops renewing (the release is done here, so it can be awaited).
  #election: Subscription | undefined;
  // When each source was seen synced, while it is: readiness, and the liveness clock's start, since a list is no watch (MG-5).
  readonly #syncedAt = new Map<object, number>();
  // Since when each source has been without a synced cache (from its start, or from losing its sync), while it is: HI-13.
  readonly #unsyncedSince = new Map<object, number>();
  // Servers that listen, closed last so the probes answer during the drain.
  readonly #servers: Listening[] = [];
  // Settles once both servers listen or failed to: a stop closes them only after that.
  #serversStarted: Promise<void> = Promise.resolve();
  // The webhook server on provisioned certificates, which starts once their first pair is there; closed with the others.
  #lateServer: Promise<void> = Promise.resolve();
  // Emits once, when the run begins to stop: ends a wait for a first provisioned pair.
  readonly #stopping$ = new Subject<void>();
  // Only 'running' starts anything; the first stop, graceful or fatal, wins.
  #phase: 'running' | 'stopping' | 'ended' = 'running';
  // The controllers were subscribed here (always without leader election, after the first lead with it).
  #controllersRunning = false;
  // This replica holds the lock now: only then is it released at the end.
  #leadingNow = false;
  // Ends a graceful stop's wait for the controllers when the lock is lost during it (MG-3).
  #cutDrain: (() => void) | undefined;
  // The pairs the webhook server serves when webhookCertificates provisions them: one shared run of the provisioner (WH-100).
  readonly #pairs$: Observable<TlsPair> | undefined;
  // The webhook server listens: /readyz waits for it (WH-89).
  #webhooksListening = false;
  // What makes the run end in error; the first one wins.
  #failure: Error | undefined;
  // Nobody hears an error any more: a failure after an unsubscribe goes to the reporter instead.
  #subscriberLeft = false;

  constructor(c: ResolvedManagerOptions, sources: Sources, out: Subscriber<ManagerEvent>, leading$: BehaviorSubject<boolean>, webhookRecorder: WebhookRecorder) {
    this.#webhookRecorder = webhookRecorder;
    this.#c = c;
    this.#sources = sources;
    this.#out = out;
    this.#leading$ = leading$;
    this.#pairs$ = c.webhookCertificates === undefined ? undefined : provisionedPairs(c.webhookCertificates, leading$);
  }

  start(): void {
    const { signal } = this.#c;
    if (signal !== undefined) {
      const onAbort = (): void => void this.#stop('the signal aborted');
      signal.addEventListener('abort', onAbort, { once: true });
      this.#caches.add(() => signal.removeEventListener('abort', onAbort));
    }
    this.#serversStarted = this.#startServers();
    this.#serversStarted.then(
      () => {
        if (this.#phase !== 'running') return;
        this.#keepCachesWarm();
        const le = this.#c.leaderElection;
        if (le === undefined) this.#runControllers();
        else this.#stand(le.candidate);
      },
      (err: unknown) => this.#fatal(toError(err)),
    );
    if (signal?.aborted) void this.#stop('the signal aborted');
  }

  /** The subscriber left: the same graceful stop, in the background. */
  unsubscribed(): void {
    this.#subscriberLeft = true;
    void this.#stop('unsubscribed');
  }

  #emit(e: ManagerEvent): void {
    if (!this.#out.closed) this.#out.next(e);
  }

  async #startServers(): Promise<void> {
    const { probesAt, metricsAt, metrics } = this.#c;
    const view = this.#view();
    const probe =
      (kind: 'readyz' | 'healthz' | 'livez', checks: () => Check[]): Route =>
      (target): Answer => ({ ...render(kind, checks(), target.query.has('verbose')), contentType: TEXT });
    const started: Promise<void>[] = [];
    if (probesAt !== undefined) {
      const routes = { '/healthz': probe('healthz', () => liveness(view)), '/livez': probe('livez', () => liveness(view)), '/readyz': probe('readyz', () => readiness(view)) };
      started.push(listen('health probe', probesAt, routes, this.#c.serverLimits).then((s) => this.#listening('probes', s)));
    }
    if (metricsAt !== undefined && metrics !== undefined) {
      const scrape = async (): Promise<Answer> => ({ status: 200, contentType: metrics.contentType, body: await metrics.metrics() });
      const secure = this.#c.metricsSecure;
      // WH-80…WH-83: over HTTPS, each scrape's token reviewed by the API server before the text is made.
      const gate = secure && new MetricsGate(secure.kubeConfig, secure.cacheTtlMs, secure.cacheSize, secure.reviewTimeoutMs);
      const gated: Route = async (target, req, signal): Promise<Answer> => {
        if (gate === undefined) return scrape();
        // The reviews stop when the scraper leaves (or its answer is late): their answer would go nowhere.
        const verdict = await gate.check(req.headers.authorization, target.path, signal);
        if (signal.aborted) return { status: 499, contentType: TEXT, body: '' };
        if (!verdict.allowed) {
          // WH-88: the caller is anyone; what went wrong (the manager's identity, the API server's address) is reported only.
          if (verdict.status === 500) reportError(new Error(`manager: secure metrics: ${verdict.detail}`));
          return { status: verdict.status, contentType: TEXT, body: `${verdict.message}\n`, ...(verdict.status === 401 && { headers: { 'www-authenticate': 'Bearer' } }) };
        }
        return scrape();
      };
      const pairs = secure && metricsPairs(secure.certDir);
      started.push(listen('metrics', metricsAt, { '/metrics': gated }, this.#c.serverLimits, pairs).then((s) => this.#listening('metrics', s)));
    }
    if (this.#c.webhooksAt !== undefined) {
      // WH-6x: served whatever the leadership, from here to the end of the drain (closed with the other servers).
      const provisioned = this.#pairs$;
      // Provisioned pairs may need this replica to lead first (no Secret yet), and leading starts once the other
      // servers listen: the webhook server then starts beside the rest, and a stop before its first pair ends the wait.
      const pairs = provisioned === undefined ? certDirPairs(this.#c.webhookCertDir) : provisioned.pipe(takeUntil(this.#stopping$));
      const webhooks = listenWebhooks(this.#c.webhooksAt, this.#c.webhooks, pairs, this.#c.serverLimits, this.#webhookRecorder).then((s) => this.#listening('webhooks', s));
      if (provisioned === undefined) started.push(webhooks);
      // A wait ended by the stop is no failure.
      else this.#lateServer = webhooks.catch((err: unknown) => (this.#phase === 'running' ? this.#fatal(toError(err)) : undefined));
    }
    // Every one settles before a failure is thrown, so a server that did start is closed with the others.
    const failed = (await Promise.allSettled(started)).find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  #listening(server: 'probes' | 'metrics' | 'webhooks', s: Listening): void {
    this.#servers.push(s);
    if (server === 'webhooks') this.#webhooksListening = true;
    this.#emit({ type: 'serving', server, address: s.address, port: s.port, url: s.url });
  }

  #view(): ProbeView {
    return {
      controllers: this.#c.controllers,
      informers: this.#sources.informers,
      otherSources: this.#sources.all.filter((s) => !isInformer(s)).map((s) => ({ name: s.name ?? 'source', synced: () => this.#syncedAt.has(s) })),
      maxSilenceMs: this.#c.maxSilenceMs,
      maxInitialSyncMs: this.#c.maxInitialSyncMs,
      unsyncedSince: (i) => this.#unsyncedSince.get(i),
      syncedAt: (i) => this.#syncedAt.get(i),
      now: () => this.#c.scheduler.now(),
      controllersRun: () => this.#controllersRunning,
      stopping: () => this.#phase !== 'running',
      ...(this.#c.webhooksAt !== undefined && { webhookServerListening: () => this.#webhooksListening }),
    };
  }

  /** MG-2: every source stays subscribed from start to end, whether or not the controllers run here; so does the certificates' provisioner (WH-100). */
  #keepCachesWarm(): void {
    if (this.#pairs$ !== undefined) {
      this.#caches.add(this.#pairs$.subscribe({ error: (err: unknown) => this.#fatal(new Error(`manager: webhookCertificates failed for good: ${toError(err).message}`, { cause: err })) }));
    }
    for (const source of this.#sources.all) {
      const name = source.name ?? 'a source';
      this.#caches.add(
        source.subscribe({
          error: (err: unknown) => this.#fatal(new Error(`manager: ${name} failed for good: ${toError(err).message}`, { cause: err })),
          complete: () => this.#fatal(new Error(`manager: ${name} was stopped while the manager still needed it`)),
        }),
      );
      this.#caches.add(
        // syncedOf emits changes only: each one starts the clock of the state it enters.
        syncedOf(source).subscribe((synced) => {
          (synced ? this.#syncedAt : this.#unsyncedSince).set(source, this.#c.scheduler.now());
          (synced ? this.#unsyncedSince : this.#syncedAt).delete(source);
        }),
      );
    }
  }

  #runControllers(): void {
    this.#controllersRunning = true;
    for (const ctl of this.#c.controllers) {
      this.#controllers.add(
        ctl.subscribe({
          next: (outcome) => this.#emit({ type: 'reconcile', controller: ctl.name, outcome }),
          error: (err: unknown) => this.#fatal(toError(err)),
          complete: () => void this.#stop(`the controller ${ctl.name} was shut down`),
        }),
      );
    }
  }

  /** MG-3: a candidate; the controllers start when it first leads, and a lost lock after that is fatal. */
  #stand(candidate: LeaderElectionOptions): void {
    this.#election = leaderElection(candidate).subscribe(({ leading, leader }) => {
      this.#emit({ type: 'leadership', leading, leader });
      const lost = this.#leadingNow && !leading;
      this.#leadingNow = leading;
      this.#leading$.next(leading);
      if (leading && !this.#controllersRunning && this.#phase === 'running') this.#runControllers();
      else if (lost) this.#lost(leader);
    });
  }

  #lost(leader: string | undefined): void {
    const lock = this.#c.leaderElection?.lock.describe() ?? '';
    this.#fatal(new Error(`manager: lost the lease ${lock} after leading (holder now ${leader ?? 'unknown'}); stopping at once, as another replica may be leading`), true);
  }

  /** Ends the run in error: after the graceful stop, or at once (`lost`: the lock is no longer this replica's). */
  #fatal(err: Error, lost = false): void {
    if (this.#phase !== 'running') {
      this.#failure ??= err;
      if (!lost) return;
      // MG-3: a drain under way stops waiting for the reconciles in flight, and aborts them.
      for (const ctl of this.#c.controllers) abortInFlight(ctl, err);
      return void this.#cutDrain?.();
    }
    this.#failure = err;
    if (!lost) return void this.#stop(err.message);
    this.#phase = 'stopping';
    this.#emit({ type: 'stopping', reason: err.message });
    // Stop taking work now; what is in flight is aborted, not waited for (the process exits), and the lock is not ours to release.
    for (const ctl of this.#c.controllers) {
      void ctl.shutdown();
      abortInFlight(ctl, err);
    }
    this.#election?.unsubscribe();
    void this.#finish();
  }

  /** MG-7: the graceful stop. */
  async #stop(reason: string): Promise<void> {
    if (this.#phase !== 'running') return;
    this.#phase = 'stopping';
    this.#emit({ type: 'stopping', reason });
    const cut = new Promise<void>((resolve) => (this.#cutDrain = resolve));
    await Promise.race([Promise.all(this.#c.controllers.map((ctl) => ctl.shutdown())), cut]);
    this.#controllers.unsubscribe();
    const le = this.#c.leaderElection;
    this.#election?.unsubscribe();
    if (le !== undefined && this.#leadingNow) {
      this.#leadingNow = false;
      this.#leading$.next(false);
      if (le.releaseOnStop) await releaseLock(le.lock, le.identity, le.renewDeadlineMs).catch((err: unknown) => reportError(toError(err)));
    }
    await this.#finish();
  }

  /** Lets go of the caches and closes the servers, then ends the Observable. */
  async #finish(): Promise<void> {
    this.#caches.unsubscribe();
    this.#stopping$.next();
    await this.#serversStarted.catch(() => undefined);
    await this.#lateServer;
    await Promise.all(this.#servers.map((s) => s.close()));
    this.#phase = 'ended';
    if (this.#failure === undefined) this.#out.complete();
    else if (this.#subscriberLeft) reportError(this.#failure);
    else this.#out.error(this.#failure);
  }
}
