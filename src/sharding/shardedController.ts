import { asyncScheduler, distinctUntilChanged, map, type Observable, of, ReplaySubject, share, skipWhile, startWith, switchMap, type SchedulerLike } from 'rxjs';
import { ReadingObservable } from '../controller/readingObservable.js';
import { abortInFlight, controller, type Controller } from '../controller/controller.js';
import type { ControllerSource } from '../controller/types.js';
import { informer } from '../informer/informer.js';
import { leaderElection } from '../leaderelection/leaderElection.js';
import { leaseLock } from '../leaderelection/leaseLock.js';
import { releaseLock } from '../leaderelection/release.js';
import { CallbackError } from '../errors/CallbackError.js';
import { Throttle } from '../errors/throttle.js';
import { describeValue } from '../options/validate.js';
import { kubeSource } from '../sources/kubeSource.js';
import type { KubeObject } from '../store/types.js';
import { shardMembers, type ShardMembers } from './members.js';
import { labelWriter } from './labelWriter.js';
import { sharder } from './sharder.js';
import { checkShardedOptions, type ShardedControllerOptions, type ShardedSettings, type ShardEvent } from './shardedOptions.js';

/** Timers of asyncScheduler on a clock that never jumps, so a wall-clock change cannot make a live Lease look expired. */
const monotonic: SchedulerLike = {
  now: () => performance.timeOrigin + performance.now(),
  schedule: ((work: Parameters<SchedulerLike['schedule']>[0], delay?: number, state?: unknown) =>
    asyncScheduler.schedule(work as never, delay, state)) as SchedulerLike['schedule'],
};

/**
 * Runs one replica of a sharded controller: N replicas with the same
 * `controller` name share the objects of `resource`, each reconciling a
 * disjoint part, and the parts move when replicas come and go.
 *
 * Subscribing makes this replica:
 * - **a member**: it holds its own Lease, named after its `identity` in
 *   `leaseNamespace` and labelled as a shard of `controller`, renewed as a
 *   leader election renews (the same timings and renew deadline). While it
 *   holds it, it runs a {@link controller} (given the controller's options:
 *   `concurrency`, `reconcileTimeoutMs`, `watches`, `rateLimiter`…) over an
 *   informer of its share only — the API server filters on the label
 *   `shard.rxkube.io/<controller>=<identity>`. When a renewal fails past
 *   the renew deadline it stops: reconciles in flight see their signal
 *   abort, no new one starts, and the informer is let go; a new term is a
 *   new controller over a fresh informer.
 * - **a candidate to run the sharder** ({@link sharder}): of all replicas,
 *   the leader of an election on the Lease `<controller>.sharder` labels the
 *   objects with their owner on a consistent hash ring over the live members.
 *   Every replica watches the members' Leases all the time, so a new leader
 *   knows how long each has been silent.
 * - **a good citizen at hand-over**: an object the sharder marked with the
 *   drain label gets no new reconcile here: the controller's next turn for
 *   that key, which comes only after the one in flight ended, removes both
 *   labels instead (conditional on the version read; a conflict backs off
 *   and tries the newer one), and only then does the sharder give the
 *   object to its new owner. So an object is never reconciled by two
 *   replicas at once.
 *
 * Unsubscribing, or aborting `signal`, leaves gracefully: the sharder
 * election is released, the reconciles in flight finish (at most
 * `shutdownTimeoutMs`), and only then is the member Lease released, so the
 * sharder moves this replica's objects at once rather than after a lease
 * duration. After an unsubscribe this goes on in the background; after the
 * signal the events complete once it is done. A replica that dies instead
 * is noticed when its Lease expires. A term that cannot go on (its
 * controller failed for good, or `source` threw) leaves the same way, so
 * its share moves, and then the events error with why.
 *
 * As with a {@link controller}, a subscription without a `next` reads no
 * outcomes, so reconcile failures go to `onError` (once a minute per key).
 *
 * ## Example
 * ```ts
 * import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
 * import { shardedController } from 'rxkube';
 * declare function check(cm: V1ConfigMap, signal: AbortSignal): Promise<void>;
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const stop = new AbortController();
 * shardedController<V1ConfigMap>({
 *   kc,
 *   resource: 'v1/configmaps',
 *   controller: 'configmap-checker',
 *   identity: process.env.POD_NAME!,
 *   leaseNamespace: 'kube-system',
 *   reconcile: async (cm, ctx) => {
 *     await check(cm, ctx.signal);
 *   },
 *   signal: stop.signal,
 * }).subscribe({
 *   // A `next` reads the outcomes too, so it is where failures show.
 *   next: (e) => {
 *     if (e.type === 'member') console.log(e.member ? 'reconciling my share' : 'not a member');
 *     if (e.type === 'outcome' && e.outcome.type === 'failed') console.warn(`${e.outcome.key}: ${e.outcome.error.message}`);
 *   },
 *   error: (err) => console.error('gave up the share', err),
 *   complete: () => process.exit(0), // left: reconciles done, Leases released
 * });
 * process.once('SIGTERM', () => stop.abort());
 * ```
 *
 * @param opts The resource, the names, the reconcile function and the timings.
 * @returns This replica's events, for as long as it is subscribed.
 * @throws {TypeError} when an option is invalid.
 */
export function shardedController<T extends KubeObject = KubeObject>(opts: ShardedControllerOptions<T>): Observable<ShardEvent<T>> {
  const s = checkShardedOptions(opts);
  const { kc, controller: name, identity, leaseNamespace } = opts;
  const { requestTimeoutMs } = s;
  const timings = { leaseDuration: s.leaseDuration, renewDeadline: s.renewDeadline, retryPeriod: s.retryPeriod };
  // The first term's controller is built now, so that a bad controller option throws here rather than on membership.
  let first: Term<T> | undefined = memberTerm(opts, s);
  return new ReadingObservable<ShardEvent<T>>((subscriber, consumes) => {
    // Failures nobody reads as outcomes, and failed hand-overs, are reported at most once a minute per key (LT-52).
    const failures = new Throttle(60_000, monotonic.now);
    const failed = (key: string, what: string, error: Error): void => {
      const passed = failures.pass(key);
      if (passed === undefined) return;
      const more = passed.held > 0 ? ` (${passed.held} more failure${passed.held === 1 ? '' : 's'} of it in the last ${Math.round(passed.sinceMs / 1000)} s not reported)` : '';
      s.report(new CallbackError('shardedController', `the ${what} of ${key} by ${identity} failed${more}`, error));
    };
    const emit = (e: ShardEvent<T>): void => subscriber.next(e);
    // Every replica keeps watching the members, so the sharder's next leader already knows who went silent when.
    const members$ = shardMembers(kc, { namespace: leaseNamespace, controller: name, scheduler: monotonic, onError: s.report }).pipe(
      share({ connector: () => new ReplaySubject<ShardMembers>(1), resetOnRefCountZero: true }),
    );
    const membersSub = members$.subscribe({ error: (err: unknown) => s.report(err) });

    const sharderLock = leaseLock(kc, { namespace: leaseNamespace, name: `${name}.sharder`, timeoutMs: requestTimeoutMs });
    const sharderSub = leaderElection({ lock: sharderLock, identity, ...timings, onError: s.report })
      .pipe(
        map((l) => l.leading),
        distinctUntilChanged(),
        // Not leading yet is not news; losing the role after holding it is.
        skipWhile((leading) => !leading),
        switchMap((leading) =>
          leading
            ? sharder({
                kc,
                resource: opts.resource,
                ...(opts.namespace !== undefined && { namespace: opts.namespace }),
                controller: name,
                leaseNamespace,
                identity,
                members: members$,
                ...(opts.ringKey !== undefined && { ringKey: opts.ringKey }),
                owns: s.owns.map(({ owner: _owner, name: _name, ...o }) => o),
                virtualNodes: s.virtualNodes,
                concurrency: s.sharderConcurrency,
                leaseDuration: s.leaseDuration,
                renewDeadline: s.renewDeadline,
                requestTimeoutMs: s.requestTimeoutMs,
                scheduler: monotonic,
                onError: s.report,
              }).pipe(
                map((event): ShardEvent<T> => ({ type: 'sharding', event })),
                startWith<ShardEvent<T>>({ type: 'sharder', leading: true }),
              )
            : of<ShardEvent<T>>({ type: 'sharder', leading: false }),
        ),
      )
      .subscribe({ next: emit, error: (err: unknown) => s.report(err) });

    // The current membership term (kept while the replica leaves, so losing membership then still aborts it),
    // the drains of the terms before it (each bounded by shutdownTimeoutMs), and whether the replica is leaving.
    let term: Term<T> | undefined;
    let drained: Promise<unknown> = Promise.resolve();
    let leaving = false;
    const memberLock = leaseLock(kc, { namespace: leaseNamespace, name: identity, labels: { [s.labels.lease]: name }, timeoutMs: requestTimeoutMs });
    const membershipSub = leaderElection({ lock: memberLock, identity, ...timings, onError: s.report }).subscribe(({ leading }) => {
      if (leading && term === undefined && !leaving) {
        let t: Term<T>;
        try {
          t = first ?? memberTerm(opts, s);
        } catch (err) {
          // A source that throws in a later term: this replica cannot reconcile its share, so it gives it up (LT-51).
          giveUp(err);
          return;
        }
        first = undefined;
        term = t;
        t.emit = emit;
        emit({ type: 'member', member: true });
        // The last term's reconciles end first, so one key never runs in two terms at once (LT-50).
        void drained.then(() => {
          if (term !== t || leaving) return;
          t.controller.subscribe({
            next: (outcome) => {
              // A hand-over is the controller's turn for a drained key, not a reconcile of the user's.
              if (outcome.type === 'gone' || !draining(s, outcome.obj)) {
                emit({ type: 'outcome', outcome });
                // As a controller's: failures go to onError while nobody reads outcomes; terminal ones the controller reports itself.
                if (outcome.type === 'failed' && !consumes && !outcome.terminal) failed(outcome.key, 'reconcile', outcome.error);
              } else if (outcome.type === 'failed' && !(outcome.error instanceof StaleRelease)) failed(outcome.key, 'hand-over', outcome.error);
            },
            // A term whose controller failed for good cannot reconcile its share: the replica gives it up (LT-51).
            error: (err: unknown) => (term === t && !leaving ? giveUp(err) : s.report(err)),
          });
        });
      } else if (!leading && term !== undefined) {
        // Others may own its objects soon: reconciles in flight must stop, also while leaving (LT-49).
        const t = term;
        drained = Promise.all([drained, t.controller.shutdown()]);
        abortInFlight(t.controller, new Error(`${identity} is no longer a member of ${name}`));
        term = undefined;
        emit({ type: 'member', member: false });
      }
    });

    /** Leaves gracefully: the sharder goes at once, the member Lease only after the last reconcile here ended. */
    const leave = async (): Promise<void> => {
      if (leaving) return;
      leaving = true;
      opts.signal?.removeEventListener('abort', onAbort);
      sharderSub.unsubscribe();
      const sharderReleased = releaseLock(sharderLock, identity, requestTimeoutMs);
      membersSub.unsubscribe();
      await Promise.all([term?.controller.shutdown(), drained]);
      membershipSub.unsubscribe();
      term = undefined;
      await Promise.all([sharderReleased, releaseLock(memberLock, identity, requestTimeoutMs)]);
    };
    const leaveAndReport = (): Promise<void> => leave().catch((err: unknown) => s.report(err));
    /** The term cannot go on: leave as on the signal (the member Lease is released, so the share moves), then end the events with why. */
    function giveUp(err: unknown): void {
      void leaveAndReport().then(() => subscriber.error(err));
    }
    function onAbort(): void {
      void leaveAndReport().then(() => subscriber.complete());
    }
    if (opts.signal !== undefined) {
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }
    return () => void leaveAndReport();
  });
}

/** Thrown to retry a hand-over whose object changed under it; not a failure to report. */
class StaleRelease extends Error {}

/** One membership term: a controller over this replica's share (whose reconciles' signal is aborted when membership is lost). */
interface Term<T> {
  readonly controller: Controller<T>;
  /** Where the term's hand-overs are told: the replica that runs it, set when it starts. */
  emit: (e: ShardEvent<T>) => void;
}

/** The user's source of a share; one that returns nothing is a mistake, not a request for the default. */
function sourceOf<T>(source: (labelSelector: string) => ControllerSource<T>, selector: string): ControllerSource<T> {
  const made = source(selector);
  if (made === null || typeof made !== 'object' || typeof (made as { subscribe?: unknown }).subscribe !== 'function') {
    throw new TypeError(`source: expected a function returning a controller source (an informer of the share), got ${describeValue(made)}`);
  }
  return made;
}

const draining = (s: ShardedSettings, obj: KubeObject): boolean => obj.metadata?.labels?.[s.labels.drain] !== undefined;

/**
 * Builds a membership term: `controller()` over an informer of the share
 * (and of the owned objects, through the same selector), with the
 * controller's options passed through. The reconcile of a key whose object
 * carries the drain label hands the object over instead of calling the
 * user's: both labels go, conditional on the version read (LT-40, LT-41).
 */
function memberTerm<T extends KubeObject>(opts: ShardedControllerOptions<T>, s: ShardedSettings): Term<T> {
  const {
    kc, resource, namespace, controller: name, identity, source, reconcile, errorPolicy, onError,
    leaseNamespace: _leaseNamespace, ringKey: _ringKey, owns: _owns, virtualNodes: _virtualNodes, sharderConcurrency: _sharderConcurrency,
    leaseDuration: _leaseDuration, renewDeadline: _renewDeadline, retryPeriod: _retryPeriod, requestTimeoutMs: _requestTimeoutMs, signal: _signal,
    ...passed
  } = opts;
  const selector = s.labels.selectorFor(identity);
  const shareOf = <O>(r: typeof resource): ControllerSource<O> =>
    informer(kubeSource(kc, r as never, { labelSelector: selector, ...(namespace !== undefined && { namespace }) }), { onError: s.report }) as unknown as ControllerSource<O>;
  const writeLabels = labelWriter(kc, [resource], s.requestTimeoutMs);
  const release = async (obj: T, key: string, signal: AbortSignal): Promise<void> => {
    const md = obj.metadata;
    if (md?.name === undefined || md.labels?.[s.labels.shard] !== identity) return;
    const written = await writeLabels(obj, { [s.labels.shard]: null, [s.labels.drain]: null }, signal);
    if (written === 'gone') return;
    // The object changed since it was read: back off, and try the version the informer brings.
    if (written === 'changed') throw new StaleRelease(`${key} changed while being released`);
    term.emit({ type: 'released', key });
  };
  const term: Term<T> = {
    emit: () => undefined,
    controller: controller<T>({
      ...passed,
      name,
      for: source === undefined ? shareOf<T>(resource) : sourceOf(source, selector),
      owns: s.owns.map(({ resource: owned, owner: _owner, name: _name, ...ownerOptions }) => ({ source: shareOf<KubeObject>(owned), ...ownerOptions })),
      reconcile: (obj, ctx) => (draining(s, obj) ? release(obj, ctx.key, ctx.signal) : reconcile(obj, ctx)),
      errorPolicy: (err, obj, ctx) => (draining(s, obj) || errorPolicy === undefined ? 'backoff' : errorPolicy(err, obj, ctx)),
      ...(onError !== undefined && { onError }),
    }),
  };
  return term;
}
