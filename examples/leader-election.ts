/**
 * Leader election on a Lease: of several candidates, one leads at a time, and
 * when it steps down (or dies) another takes over.
 *
 *   npm run example leader-election                  # one candidate on the current context; run several copies
 *   npm run example leader-election -- --simulator   # three candidates on the built-in API server, taking turns
 *
 * It prints one line per change, e.g. `candidate-2: leading (leader candidate-2)`.
 */
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { distinctUntilChanged, EMPTY, endWith, interval, map, merge, repeat, switchMap, takeUntil, timer, type Observable } from 'rxjs';
import { leaderElection, leaseLock, type Leadership } from 'rxkube';
import { exampleCluster } from './lib/cluster.js';

/** Fast timings for the demo; a real controller keeps the defaults (15 s / 10 s / 2 s). */
const TIMINGS = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 300 } as const;

/**
 * One candidate's leadership as lines: what it sees whenever it starts or
 * stops leading, or observes a new leader. While it leads it "works": it
 * prints a heartbeat every half second.
 *
 * @param kc the cluster holding the Lease.
 * @param identity this candidate's name in the Lease.
 * @returns lines to print; unsubscribing stops the candidate and releases the Lease.
 */
export function candidate(kc: KubeConfig, identity: string): Observable<string> {
  const leadership$ = leaderElection({
    lock: leaseLock(kc, { namespace: 'default', name: 'example-leader' }),
    identity,
    releaseOnCancel: true,
    ...TIMINGS,
  });
  return leadership$.pipe(
    distinctUntilChanged((a: Leadership, b: Leadership) => a.leading === b.leading && a.leader === b.leader),
    switchMap(({ leading, leader }) => {
      const line = `${identity}: ${leading ? 'leading' : 'following'} (leader ${leader ?? 'none'})`;
      // Work happens only while leading: switchMap drops it the moment leadership ends.
      const work$ = leading ? interval(500).pipe(map((n) => `${identity}: working (${n + 1})`)) : EMPTY;
      return merge([line], work$);
    }),
  );
}

if ((import.meta as { main?: boolean }).main) {
  const cluster = await exampleCluster(process.argv.slice(2), async () => {});
  const names = cluster.simulator === undefined ? [`${hostname()}-${process.pid}`] : ['candidate-1', 'candidate-2', 'candidate-3'];
  const running = names.map((name, i) => {
    const lines$ = candidate(cluster.kc, name);
    // On the simulator each candidate leaves for a second now and then (every 2 s, 3 s, 4 s), so the lead moves.
    const turns$ =
      cluster.simulator === undefined
        ? lines$
        : lines$.pipe(
            takeUntil(timer(2_000 + 1_000 * i)),
            endWith(`${name}: stepping down for a second`),
            repeat({ delay: 1_000 }),
          );
    return turns$.subscribe((line) => console.log(line));
  });
  await cluster.done;
  for (const r of running) r.unsubscribe();
  // The releases are conditional updates in flight; give them their round trip before the simulator goes.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await cluster.close();
}
