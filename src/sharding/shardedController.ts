import { asyncScheduler, distinctUntilChanged, map, Observable, of, ReplaySubject, share, skipWhile, startWith, switchMap, type SchedulerLike } from 'rxjs';
import { leaderElection } from '../leaderelection/leaderElection.js';
import { leaseLock } from '../leaderelection/leaseLock.js';
import { releaseLock } from '../leaderelection/release.js';
import type { KubeObject } from '../store/types.js';
import { shardMembers, type ShardMembers } from './members.js';
import { sharder } from './sharder.js';
import { resolveShardedOptions, type ShardedControllerOptions, type ShardEvent } from './shardedOptions.js';
import { ShardRun } from './shardRun.js';

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
 *   holds it, it runs an informer over its share only — the API server
 *   filters on the label `shard.rxkube.io/<controller>=<identity>` — and a
 *   {@link controller} reconciling it. When a renewal fails past the renew
 *   deadline it stops: reconciles in flight see their signal abort, no new
 *   one starts, and the informer is let go.
 * - **a candidate to run the sharder** ({@link sharder}): of all replicas,
 *   the leader of an election on the Lease `<controller>.sharder` labels the
 *   objects with their owner on a consistent hash ring over the live members.
 *   Every replica watches the members' Leases all the time, so a new leader
 *   knows how long each has been silent.
 * - **a good citizen at hand-over**: an object the sharder marked with the
 *   drain label gets no new reconcile here; once the one in flight ended,
 *   this replica removes both labels, and only then does the sharder give
 *   the object to its new owner. So an object is never reconciled by two
 *   replicas at once.
 *
 * Unsubscribing, or aborting `signal`, leaves gracefully: the sharder
 * election is released, the reconciles in flight finish (at most
 * `shutdownTimeoutMs`), and only then is the member Lease released, so the
 * sharder moves this replica's objects at once rather than after a lease
 * duration. After an unsubscribe this goes on in the background; after the
 * signal the events complete once it is done. A replica that dies instead
 * is noticed when its Lease expires.
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
 *   next: (e) => {
 *     if (e.type === 'member') console.log(e.member ? 'reconciling my share' : 'not a member');
 *   },
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
  const c = resolveShardedOptions(opts);
  const timings = { leaseDuration: c.leaseDuration, renewDeadline: c.renewDeadline, retryPeriod: c.retryPeriod };
  return new Observable<ShardEvent<T>>((subscriber) => {
    const emit = (e: ShardEvent<T>): void => subscriber.next(e);
    // Every replica keeps watching the members, so the sharder's next leader already knows who went silent when.
    const members$ = shardMembers(c.kc, { namespace: c.leaseNamespace, controller: c.controller, scheduler: monotonic, onError: c.report }).pipe(
      share({ connector: () => new ReplaySubject<ShardMembers>(1), resetOnRefCountZero: true }),
    );
    const membersSub = members$.subscribe({ error: (err: unknown) => c.report(err) });

    const sharderLock = leaseLock(c.kc, { namespace: c.leaseNamespace, name: `${c.controller}.sharder`, timeoutMs: c.requestTimeoutMs });
    const sharderSub = leaderElection({ lock: sharderLock, identity: c.identity, ...timings, onError: c.report })
      .pipe(
        map((l) => l.leading),
        distinctUntilChanged(),
        // Not leading yet is not news; losing the role after holding it is.
        skipWhile((leading) => !leading),
        switchMap((leading) =>
          leading
            ? sharder({
                kc: c.kc,
                resource: c.resource,
                ...(c.namespace !== undefined && { namespace: c.namespace }),
                controller: c.controller,
                leaseNamespace: c.leaseNamespace,
                identity: c.identity,
                members: members$,
                ringKey: c.ringKey,
                owns: c.owns.map(({ owner: _owner, name: _name, ...o }) => o),
                virtualNodes: c.virtualNodes,
                concurrency: c.sharderConcurrency,
                leaseDuration: c.leaseDuration,
                renewDeadline: c.renewDeadline,
                requestTimeoutMs: c.requestTimeoutMs,
                scheduler: monotonic,
                onError: c.report,
              }).pipe(
                map((event): ShardEvent<T> => ({ type: 'sharding', event })),
                startWith<ShardEvent<T>>({ type: 'sharder', leading: true }),
              )
            : of<ShardEvent<T>>({ type: 'sharder', leading: false }),
        ),
      )
      .subscribe({ next: emit, error: (err: unknown) => c.report(err) });

    // The current membership term, and whether the replica is leaving (then no new term starts).
    let run: ShardRun<T> | undefined;
    let leaving = false;
    const memberLock = leaseLock(c.kc, { namespace: c.leaseNamespace, name: c.identity, labels: { [c.labels.lease]: c.controller }, timeoutMs: c.requestTimeoutMs });
    const membershipSub = leaderElection({ lock: memberLock, identity: c.identity, ...timings, onError: c.report }).subscribe(({ leading }) => {
      if (leading && run === undefined && !leaving) {
        run = new ShardRun<T>(c, emit);
        emit({ type: 'member', member: true });
        run.start();
      } else if (!leading && run !== undefined) {
        void run.stop(true);
        run = undefined;
        emit({ type: 'member', member: false });
      }
    });

    /** Leaves gracefully: the sharder goes at once, the member Lease only after the last reconcile here ended. */
    const leave = async (): Promise<void> => {
      if (leaving) return;
      leaving = true;
      sharderSub.unsubscribe();
      const sharderReleased = releaseLock(sharderLock, c.identity, c.requestTimeoutMs);
      membersSub.unsubscribe();
      const last = run;
      run = undefined;
      await last?.stop(false);
      membershipSub.unsubscribe();
      await Promise.all([sharderReleased, releaseLock(memberLock, c.identity, c.requestTimeoutMs)]);
    };
    const leaveAndReport = (): Promise<void> => leave().catch((err: unknown) => c.report(err));
    if (c.signal !== undefined) {
      const onAbort = (): void => void leaveAndReport().then(() => subscriber.complete());
      if (c.signal.aborted) onAbort();
      else c.signal.addEventListener('abort', onAbort, { once: true });
    }
    return () => void leaveAndReport();
  });
}
