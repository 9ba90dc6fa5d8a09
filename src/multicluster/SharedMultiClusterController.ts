import { Observable, asyncScheduler, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { controller, type Controller } from '../controller/controller.js';
import { CONTROLLER_OPTION_NAMES } from '../controller/options.js';
import type { ControllerOptions, ControllerSource, ForSource, ReconcileAction, ReconcileContext } from '../controller/types.js';
import { ErrorChannel } from '../errors/ErrorChannel.js';
import { Histogram, seconds } from '../workqueue/metrics.js';
import { defaultControllerRateLimiter } from '../workqueue/rateLimiters.js';
import { checkOptionNames, functionOption, numberOption, schedulerOption, describeValue } from '../options/validate.js';
import { clusterChanges, type ClusterChange } from './clusterChanges.js';
import { ClusterError } from './ClusterError.js';
import { FairShare } from './fairShare.js';
import type {
  ClusterControllerMetrics,
  ClusterControllerStatus,
  ClusterReconcileOutcome,
  ClusterSource,
  MultiClusterController,
  MultiClusterControllerOptions,
} from './multiClusterController.js';
import type { MultiClusterInformer } from './multiClusterInformer.js';
import type { Cluster, ClusterProvider } from './types.js';

// One list with the controller's, so an option the controller gains is accepted here too.
const OPTION_NAMES = ['clusters', ...CONTROLLER_OPTION_NAMES];

/** Options each cluster's controller is given as they are: every controller option the fleet does not handle itself. */
const PASSED_THROUGH = CONTROLLER_OPTION_NAMES.filter(
  (n): n is PassedThrough => !['for', 'owns', 'watches', 'reconcile', 'errorPolicy', 'concurrency', 'signal', 'rateLimiter', 'scheduler', 'onError', 'name'].includes(n),
);
type PassedThrough = Exclude<
  (typeof CONTROLLER_OPTION_NAMES)[number],
  'for' | 'owns' | 'watches' | 'reconcile' | 'errorPolicy' | 'concurrency' | 'signal' | 'rateLimiter' | 'scheduler' | 'onError' | 'name'
>;

/** One cluster's controller, from the cluster's join to its controller's drain. */
interface ClusterRun<T> {
  readonly cluster: Cluster;
  // Aborted when the cluster leaves or is replaced: reconciles in flight get it through their signal.
  readonly abort: AbortController;
  // Created once the cluster's previous controller (if any) has drained, so a key never runs in two at once.
  controller: Controller<T> | undefined;
  subscription: Subscription | undefined;
  // Reconcile durations inside a slot, in controller-runtime's buckets; the controller's own include the wait.
  time: Histogram | undefined;
  // Why it is stopping, once it is: failures carrying this error are the stop, not news.
  stopping: Error | undefined;
}

/** The pass-through options that were given, for one cluster's controller. */
function passedThrough(o: Pick<MultiClusterControllerOptions<unknown>, PassedThrough>): Partial<Pick<ControllerOptions<unknown>, PassedThrough>> {
  const out: Record<string, unknown> = {};
  for (const n of PASSED_THROUGH) if (o[n] !== undefined) out[n] = o[n];
  return out;
}

/** An optional array option, each entry checked. */
function checkList(where: string, name: string, value: unknown, check: (entry: unknown, i: number) => void): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new TypeError(`${where}: option "${name}" must be an array, got ${describeValue(value)}`);
  value.forEach(check);
}

function isMulti<T>(source: ClusterSource<T>): source is MultiClusterInformer<T> {
  return typeof (source as Partial<MultiClusterInformer<T>>).cluster === 'function';
}

/** One cluster's part of a source: the cluster's view of a multi-cluster informer, or the shared source itself. */
function partOf<T>(source: ClusterSource<T>, cluster: string): ControllerSource<T> {
  return isMulti(source) ? source.cluster(cluster) : source;
}

/** The one multi-cluster controller implementation: one controller per cluster, slots shared round-robin. */
export class SharedMultiClusterController<T> extends Observable<ClusterReconcileOutcome<T>> implements MultiClusterController<T> {
  readonly name: string;
  readonly errors$: Observable<Error>;
  readonly #opts: MultiClusterControllerOptions<T>;
  // The primary source, out of its `{ source, predicates }` entry when given one.
  readonly #primary: ClusterSource<T>;
  readonly #clusters: ClusterProvider;
  readonly #concurrency: number;
  readonly #scheduler: SchedulerLike;
  // Slots over every cluster, granted in turn.
  readonly #slots: FairShare;
  // Where the controllers' own errors go: onError, errors$ subscribers, or the process reporter.
  readonly #errors: ErrorChannel;
  // Each cluster present, by name.
  readonly #runs = new Map<string, ClusterRun<T>>();
  // The last drain of each cluster's controller: its next controller waits for it.
  readonly #drains = new Map<string, Promise<void>>();
  readonly #subscribers = new Set<Subscriber<ClusterReconcileOutcome<T>>>();
  #provider: Subscription | undefined;
  // Set for good by shutdown(), the signal, or a provider that failed.
  #ended: { readonly error: Error | undefined; readonly drained: Promise<void> } | undefined;

  constructor(opts: MultiClusterControllerOptions<T>) {
    let self: SharedMultiClusterController<T> | undefined;
    super((subscriber) => (self as SharedMultiClusterController<T>).#subscribe(subscriber));
    self = this;
    const where = 'multiClusterController';
    const o = checkOptionNames(where, opts, OPTION_NAMES) as unknown as MultiClusterControllerOptions<T>;
    // `for` is a source, or `{ source, predicates }` as a controller's (CR-113); the predicates reach each cluster's controller.
    const entry = o.for as { source?: unknown; subscribe?: unknown } | undefined;
    const wrapped = typeof entry === 'object' && entry !== null && typeof entry.subscribe !== 'function' && 'source' in entry;
    const primary = (wrapped ? entry.source : entry) as ClusterSource<T> | undefined;
    this.#primary = primary as ClusterSource<T>;
    if (typeof primary !== 'object' || primary === null || typeof primary.subscribe !== 'function') {
      throw new TypeError(`${where}: option "for" must be a multi-cluster informer or an informer, got ${describeValue(primary)}`);
    }
    const clusters = o.clusters ?? (isMulti(primary) ? primary.clusters : undefined);
    if (typeof (clusters as Partial<ClusterProvider> | undefined)?.subscribe !== 'function') {
      throw new TypeError(`${where}: option "clusters" must be an Observable of cluster sets (it is required when "for" is a single-cluster source), got ${describeValue(clusters)}`);
    }
    this.#clusters = clusters as ClusterProvider;
    checkList(where, 'owns', o.owns, (entry, i) => {
      if (typeof entry !== 'object' || entry === null || typeof (entry as { source?: { subscribe?: unknown } }).source?.subscribe !== 'function') {
        throw new TypeError(`${where}: owns[${i}] must be { source, kind?, apiVersion? } with a (multi-cluster) informer as source, got ${describeValue(entry)}`);
      }
    });
    checkList(where, 'watches', o.watches, (entry, i) => {
      const w = entry as { source?: { subscribe?: unknown }; map?: unknown } | null;
      if (typeof entry !== 'object' || w === null || typeof w.source?.subscribe !== 'function' || typeof w.map !== 'function') {
        throw new TypeError(`${where}: watches[${i}] must be { source, map(obj, cluster) } with a (multi-cluster) informer as source, got ${describeValue(entry)}`);
      }
    });
    if (typeof o.reconcile !== 'function') throw new TypeError(`${where}: option "reconcile" must be a function, got ${describeValue(o.reconcile)}`);
    functionOption(where, 'errorPolicy', o.errorPolicy);
    this.#concurrency = numberOption(where, 'concurrency', o.concurrency, 1, { min: 1, integer: true });
    this.#scheduler = schedulerOption(where, o.scheduler, asyncScheduler);
    functionOption(where, 'rateLimiter', o.rateLimiter);
    const name = o.name ?? primary.name ?? 'controller';
    if (typeof name !== 'string' || name === '') throw new TypeError(`${where}: option "name" must be a non-empty string, got ${describeValue(name)}`);
    this.name = name;
    this.#opts = o;
    // Every other option is checked the way each cluster's controller will check it, by one built and never run.
    controller(this.#controllerOptions({ name: 'options-check', kubeConfig: undefined as never }, undefined));
    this.#slots = new FairShare(this.#concurrency);
    this.#errors = new ErrorChannel(functionOption(where, 'onError', o.onError));
    this.errors$ = this.#errors.errors$;
    const signal = o.signal;
    if (signal !== undefined) {
      if (signal.aborted) void this.shutdown();
      else signal.addEventListener('abort', () => void this.shutdown(), { once: true });
    }
  }

  status(): readonly ClusterControllerStatus[] {
    const out: ClusterControllerStatus[] = [];
    for (const [name, run] of this.#sortedRuns()) {
      const s = run.controller?.status();
      if (s === undefined) continue;
      out.push({ ...s, cluster: name, inFlight: this.#slots.active(name), queueDepth: s.queueDepth + this.#slots.waiting(name) });
    }
    return out;
  }

  metrics(): readonly ClusterControllerMetrics[] {
    const out: ClusterControllerMetrics[] = [];
    for (const [name, run] of this.#sortedRuns()) {
      const m = run.controller?.metrics();
      if (m === undefined || run.time === undefined) continue;
      out.push({ ...m, cluster: name, reconcileTime: run.time.snapshot(), activeWorkers: this.#slots.active(name), maxConcurrentReconciles: this.#concurrency });
    }
    return out;
  }

  shutdown(): Promise<void> {
    return this.#end(undefined);
  }

  // ------------------------------------------------------------ lifetime

  #subscribe(subscriber: Subscriber<ClusterReconcileOutcome<T>>): () => void {
    if (this.#ended !== undefined) {
      if (this.#ended.error !== undefined) subscriber.error(this.#ended.error);
      else subscriber.complete();
      return () => {};
    }
    this.#subscribers.add(subscriber);
    if (this.#subscribers.size === 1) {
      this.#provider = clusterChanges(this.#clusters, (err) => this.#report(err)).subscribe({
        next: (changes) => this.#apply(changes),
        error: (err: unknown) => void this.#end(err instanceof Error ? err : new Error(String(err))),
      });
    }
    return () => {
      if (!this.#subscribers.delete(subscriber) || this.#subscribers.size > 0 || this.#ended !== undefined) return;
      // The last subscriber left: every cluster's controller drains in the background; a new subscriber starts afresh.
      this.#provider?.unsubscribe();
      this.#provider = undefined;
      for (const name of [...this.#runs.keys()]) this.#stop(name, 'the controller has no subscriber left', false);
    };
  }

  #end(error: Error | undefined): Promise<void> {
    if (this.#ended !== undefined) return this.#ended.drained;
    this.#provider?.unsubscribe();
    this.#provider = undefined;
    for (const name of [...this.#runs.keys()]) this.#stop(name, 'the controller is shutting down', false);
    if (error !== undefined) this.#report(error);
    const drained = Promise.all(this.#drains.values()).then(() => {
      const subscribers = [...this.#subscribers];
      this.#subscribers.clear();
      for (const s of subscribers) {
        if (error !== undefined) s.error(error);
        else s.complete();
      }
      this.#errors.complete();
    });
    this.#ended = { error, drained };
    return drained;
  }

  #apply(changes: readonly ClusterChange[]): void {
    for (const change of changes) {
      if (change.type === 'leave') this.#stop(change.name, 'it left the fleet', true);
      else {
        if (change.type === 'replace') this.#stop(change.cluster.name, 'its KubeConfig changed', true);
        this.#start(change.cluster);
      }
    }
  }

  #start(cluster: Cluster): void {
    const run: ClusterRun<T> = { cluster, abort: new AbortController(), controller: undefined, subscription: undefined, time: undefined, stopping: undefined };
    this.#runs.set(cluster.name, run);
    void (this.#drains.get(cluster.name) ?? Promise.resolve()).then(() => {
      if (this.#runs.get(cluster.name) === run && run.stopping === undefined) this.#launch(run);
    });
  }

  #launch(run: ClusterRun<T>): void {
    const name = run.cluster.name;
    let c: Controller<T>;
    try {
      c = controller(this.#controllerOptions(run.cluster, run));
    } catch (err) {
      this.#report(new ClusterError(name, `its controller could not be built: ${(err as Error).message}`, err));
      return;
    }
    run.controller = c;
    run.time = new Histogram(c.metrics().reconcileTime.buckets.map((b) => b.le));
    run.subscription = c.subscribe({
      next: (o) => {
        // A cluster that left or changed KubeConfig had its reconciles aborted: what they failed with is the stop, not news (MC-13).
        if (o.type === 'failed' && (run.abort.signal.aborted || o.error === run.stopping)) return;
        const outcome: ClusterReconcileOutcome<T> = { ...o, cluster: name };
        for (const s of [...this.#subscribers]) s.next(outcome);
      },
      error: (err: unknown) => this.#report(new ClusterError(name, `its controller failed: ${(err as Error)?.message ?? String(err)}`, err)),
    });
  }

  /** The cluster's controller stops: it takes no more keys, reconciles waiting for a slot give up, those running finish (or are aborted). */
  #stop(name: string, why: string, abortInFlight: boolean): void {
    const run = this.#runs.get(name);
    if (run === undefined) return;
    this.#runs.delete(name);
    const reason = new ClusterError(name, `stopped: ${why}`);
    run.stopping = reason;
    if (abortInFlight) run.abort.abort(reason);
    this.#slots.refuse(name, reason);
    const drained = (run.controller?.shutdown() ?? Promise.resolve()).then(() => run.subscription?.unsubscribe());
    const previous = this.#drains.get(name) ?? Promise.resolve();
    const both = Promise.all([previous, drained]).then(() => {
      if (this.#drains.get(name) === both) this.#drains.delete(name);
    });
    this.#drains.set(name, both);
  }

  /** The options of one cluster's controller; `run` is undefined for the up-front check. */
  #controllerOptions(cluster: Cluster, run: ClusterRun<T> | undefined): ControllerOptions<T> {
    const o = this.#opts;
    const name = cluster.name;
    const errorPolicy = o.errorPolicy;
    return {
      for: this.#primary === o.for ? partOf(this.#primary, name) : { ...(o.for as ForSource<T>), source: partOf(this.#primary, name) },
      owns: (o.owns ?? []).map((entry) => ({ ...entry, source: partOf(entry.source, name) })),
      watches: (o.watches ?? []).map((w) => ({
        source: partOf(w.source, name),
        map: (obj: unknown) => w.map(obj, cluster),
        ...(w.predicates !== undefined && { predicates: w.predicates }),
      })),
      reconcile: (obj, ctx) => this.#reconcile(run, obj, ctx),
      ...(errorPolicy !== undefined && { errorPolicy: (err: Error, obj: T, ctx: ReconcileContext<T>) => errorPolicy(err, obj, { ...ctx, cluster }) }),
      concurrency: this.#concurrency,
      ...passedThrough(o),
      ...(run !== undefined && { rateLimiter: o.rateLimiter?.() ?? defaultControllerRateLimiter<string>({ scheduler: this.#scheduler }) }),
      scheduler: this.#scheduler,
      onError: (err) => this.#report(new ClusterError(name, err.message, err)),
      name: this.name,
    };
  }

  /** One reconcile: wait for a slot in turn with the other clusters, then run the user's reconcile with the cluster in its context. */
  async #reconcile(run: ClusterRun<T> | undefined, obj: T, ctx: ReconcileContext<T>): Promise<ReconcileAction> {
    if (run === undefined) throw new Error('unreachable: the options-check controller never runs');
    if (run.stopping !== undefined) throw run.stopping;
    const name = run.cluster.name;
    const signal = AbortSignal.any([ctx.signal, run.abort.signal]);
    const release = await this.#slots.acquire(name, signal);
    const startedAt = this.#scheduler.now();
    try {
      return await this.#opts.reconcile(obj, { ...ctx, signal, cluster: run.cluster });
    } finally {
      run.time?.observe(seconds(this.#scheduler.now() - startedAt));
      release();
    }
  }

  #sortedRuns(): [string, ClusterRun<T>][] {
    return [...this.#runs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  #report(err: Error): void {
    this.#errors.report(err);
  }
}
