import { Observable } from 'rxjs';
import { Elector } from './elector.js';
import { validateOptions, type LeaderElectionOptions } from './options.js';
import type { Leadership } from './types.js';

/**
 * Runs one candidate of a leader election and emits its leadership: of N
 * replicas subscribed with the same lock, at most one is leading at a time.
 *
 * It follows client-go's `tools/leaderelection` on a lock such as a
 * `coordination.k8s.io/v1` Lease ({@link leaseLock}): a candidate acquires
 * the lock by creating it, or by a conditional update once the holder's
 * lease has expired; the leader renews it every `retryPeriod` by a
 * conditional update (on the `resourceVersion`), keeping `acquireTime` and
 * counting `leaseTransitions` on every change of holder. Expiry is judged
 * the way client-go judges it: by how long ago *this* replica saw the record
 * change, on its own clock, never by the timestamps written in it, so clocks
 * that disagree do not matter. A leader whose renewals have not succeeded
 * within `renewDeadline` of the last one it sent stops acting — before any
 * other replica can consider the lease expired, since
 * `renewDeadline < leaseDuration`.
 *
 * The Observable is cold: subscribing starts the candidate, which emits
 * `{ leading: false, leader: undefined }` at once and then every change of
 * `leading` or of the observed `leader`. Unsubscribing stops it; a leader
 * stops acting (onStoppedLeading, the signal of onStartedLeading aborts)
 * first and then, with `releaseOnCancel`, empties the lock's holder so that a
 * successor takes over at its next attempt. After losing the lock, the
 * replica stays a candidate. Each subscription is a separate candidate with
 * the same identity: share the Observable (`share()`) to watch one
 * candidate from several places.
 *
 * Contention (409 Conflict or AlreadyExists) is the normal outcome of a
 * lost race and is not reported; every other failure goes to `onError`, or
 * to `reportError` when none is given. The Observable itself never errors.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { EMPTY, switchMap } from 'rxjs';
 * import { leaderElection, leaseLock } from 'rxkube';
 * import type { Observable } from 'rxjs';
 * declare const controller$: Observable<unknown>;
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const leadership$ = leaderElection({
 *   lock: leaseLock(kc, { namespace: 'kube-system', name: 'my-controller' }),
 *   identity: `${process.env.HOSTNAME}-${process.pid}`,
 *   releaseOnCancel: true,
 *   onNewLeader: (id) => console.log(`leader is now ${id}`),
 * });
 * // Run the controller only while this replica leads.
 * const sub = leadership$.pipe(switchMap(({ leading }) => (leading ? controller$ : EMPTY))).subscribe();
 * process.once('SIGTERM', () => sub.unsubscribe());
 * ```
 *
 * @param opts The lock, this replica's identity, the timings and the callbacks.
 * @returns The leadership of this replica, for as long as it is subscribed.
 */
export function leaderElection(opts: LeaderElectionOptions): Observable<Leadership> {
  const config = validateOptions(opts);
  return new Observable<Leadership>((subscriber) => {
    subscriber.next({ leading: false, leader: undefined });
    const elector = new Elector(config, (l) => subscriber.next(l));
    elector.start();
    return () => elector.stop();
  });
}
