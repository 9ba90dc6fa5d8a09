// The merged cache against several live servers: churn on each, a restart,
// clusters joining and leaving. At every event no key of one cluster touches
// another's, and once the writes stop the cache equals the union of the
// servers that are in the fleet.

import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { clusterKey } from '../../src/multicluster/clusterKey.js';
import { multiClusterInformer, type MultiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import type { ClusterEvent } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { unwrapTombstone } from '../../src/store/DeletedFinalStateUnknown.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Fleet, fastReflector } from './fleet.js';

let fleet: Fleet | undefined;
let sub: Subscription | undefined;

afterEach(async () => {
  sub?.unsubscribe();
  await fleet?.close();
  fleet = undefined;
});

/**
 * Subscribes with a check run at every event: the object's name carries its
 * cluster (every server names its pods `<cluster>-…`), the event's key is that
 * cluster's, and the store already holds what the event says. `replica` is
 * built from the events alone, so it shows whether they told everything.
 */
function watchChecked(inf: MultiClusterInformer<V1Pod>, violations: string[], replica: Map<string, string>): Subscription {
  return inf.subscribe((e: ClusterEvent<V1Pod>) => {
    if (e.type === 'delete') replica.delete(e.key);
    else replica.set(e.key, e.obj.metadata?.resourceVersion ?? '');
    const obj = unwrapTombstone(e.obj);
    const name = obj?.metadata?.name ?? '';
    if (obj !== undefined && !name.startsWith(`${e.cluster}-`)) violations.push(`${e.type} in ${e.cluster} carries ${name}`);
    if (obj !== undefined && e.key !== clusterKey(e.cluster, `${obj.metadata?.namespace}/${name}`)) violations.push(`${e.type} key ${e.key} for ${name} in ${e.cluster}`);
    const stored = inf.store.getByKey(e.key);
    if (e.type === 'delete' ? stored !== undefined : stored !== e.obj) violations.push(`${e.type} ${e.key} announced before the store had it`);
  });
}

function contents(inf: MultiClusterInformer<V1Pod>): Map<string, string> {
  return new Map(inf.store.listKeys().map((k) => [k, inf.store.getByKey(k)?.metadata?.resourceVersion ?? '']));
}

function same(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

describe('a multi-cluster cache under churn', () => {
  it('ends equal to the union of the servers after churn on each, a restart, a join and a leave, with no key crossing clusters', async () => {
    fleet = await Fleet.start(['a', 'b', 'c'], 20);
    const inf = multiClusterInformer(fleet.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {} });
    const violations: string[] = [];
    const replica = new Map<string, string>();
    sub = watchChecked(inf, violations, replica);
    await inf.whenSynced({ timeout: 10_000 });
    const f = fleet;
    const churn = (name: string) =>
      f.server(name).churn({ creates: 120, updates: 300, deletes: 80, perSecond: 600, namePrefix: `${name}-c`, seed: name.charCodeAt(0) }).done;
    const churns = [churn('a'), churn('b'), churn('c')];
    await waitFor(() => inf.store.byIndex('cluster', 'b').length > 40, 'churn to reach b');
    await f.server('b').restart({ downMs: 300 });
    await f.add('d', 10);
    churns.push(churn('d'));
    await waitFor(() => inf.store.byIndex('cluster', 'd').length >= 10, 'd to join');
    f.drop('c');
    expect(inf.store.byIndex('cluster', 'c')).toEqual([]);
    await Promise.all(churns);
    await waitFor(() => same(contents(inf), f.union()), 'the cache to equal the union of a, b and d', 20_000);
    expect(same(replica, f.union())).toBe(true);
    await waitFor(() => f.server('c').stats.watchesOpen === 0, 'c to have no watch open');
    expect(inf.store.listIndexFuncValues('cluster')).toEqual(['a', 'b', 'd']);
    expect(violations).toEqual([]);
  });

  it('for any sequence of writes, restarts, joins and leaves, the cache ends equal to the union (property)', async () => {
    const names = ['x', 'y', 'z'] as const;
    const cluster = fc.constantFrom(...names);
    const step = fc.oneof(
      fc.record({ op: fc.constant('create' as const), cluster, n: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ op: fc.constant('update' as const), cluster, n: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ op: fc.constant('delete' as const), cluster, n: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ op: fc.constant('restart' as const), cluster, n: fc.integer({ min: 0, max: 100 }) }),
      fc.record({ op: fc.constant('toggle' as const), cluster, n: fc.constant(0) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const f = await Fleet.start(names, 2);
        fleet = f;
        const inf = multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { reflector: fastReflector, onError: () => {} });
        const violations: string[] = [];
        const replica = new Map<string, string>();
        const s = watchChecked(inf, violations, replica);
        try {
          await inf.whenSynced({ timeout: 10_000 });
          const present = new Set<string>(names);
          // Each update writes a new label value, so it is a change the informers must pass on.
          let updates = 0;
          for (const { op, cluster: c, n } of steps) {
            const server = f.server(c);
            const name = `${c}-p${n}`;
            const existing = server.list<V1Pod>('v1/pods').find((p) => p.metadata?.name === name);
            if (op === 'create' && existing === undefined) await server.create('v1/pods', pod(name));
            else if (op === 'update' && existing !== undefined) await server.update('v1/pods', { ...existing, metadata: { ...existing.metadata, labels: { n: String(++updates) } } });
            else if (op === 'delete' && existing !== undefined) await server.delete('v1/pods', 'default', name);
            else if (op === 'restart') await server.restart({ downMs: n });
            else if (op === 'toggle') {
              if (present.has(c)) {
                present.delete(c);
                f.drop(c);
              } else {
                present.add(c);
                await f.add(c, 0);
              }
            }
          }
          await waitFor(() => same(contents(inf), f.union()), `the cache to equal the union after ${JSON.stringify(steps)}`, 15_000);
          expect(same(replica, f.union()), 'what the events told equals the union').toBe(true);
          expect(violations).toEqual([]);
        } finally {
          s.unsubscribe();
          await f.close();
          fleet = undefined;
        }
      }),
      { numRuns: 12 },
    );
  });
});
