import type { V1ConfigMap } from '@kubernetes/client-node';
import { BehaviorSubject, Observable, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/controller/controller.js';
import { multiClusterController } from '../../src/multicluster/multiClusterController.js';
import { multiClusterInformer } from '../../src/multicluster/multiClusterInformer.js';
import { readingOf } from '../../src/multicluster/providerReading.js';
import type { Cluster } from '../../src/multicluster/types.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { configMap } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Fleet, fastReflector } from './fleet.js';

// The order in which the readers of one provider (an informer, a controller) are given its sets.

let fleet: Fleet | undefined;
const subscriptions: Subscription[] = [];
const controllers: Controller<V1ConfigMap>[] = [];

afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  await fleet?.close();
  fleet = undefined;
});

describe('the sets of a provider read by an informer and by a controller over it', () => {
  it('reach the controller in the order the provider gave them when one is given from inside an event of the last (MC-15, LT-27)', async () => {
    const f = (fleet = await Fleet.start(['a', 'b'], 0));
    await f.add('c', 0, false); // its server only: the sets below are given by hand
    const set = (...names: string[]) => names.map((name) => ({ name, kubeConfig: f.server(name).kubeConfig() }));
    for (const name of ['a', 'b', 'c']) await f.server(name).create('v1/configmaps', configMap(`${name}-cm`));
    const configMaps = multiClusterInformer(f.provider, (c) => kubeSource(c.kubeConfig, 'v1/configmaps'), { reflector: fastReflector, onError: () => {} });
    // Subscribed before the controller, so it is the provider's first reader: it hears of each set first.
    let swapped = false;
    subscriptions.push(
      configMaps.subscribe((e) => {
        // b's removal brings c in, from inside the delete that says b is gone.
        if (e.type === 'delete' && e.reason === 'cluster-removed' && e.cluster === 'b' && !swapped) {
          swapped = true;
          f.provider.next(set('a', 'c'));
        }
      }),
    );
    const reconciled: string[] = [];
    const c = multiClusterController({ for: configMaps, reconcile: (_obj, ctx) => void reconciled.push(`${ctx.cluster.name}/${ctx.key}`) });
    controllers.push(c);
    subscriptions.push(c.subscribe());
    await waitFor(() => reconciled.includes('a/default/a-cm') && reconciled.includes('b/default/b-cm'), 'a and b reconciled');
    f.provider.next(set('a'));
    expect(swapped).toBe(true);
    // The provider's last set names c: the controller reconciles it there, as the informer lists it.
    await waitFor(() => reconciled.includes('c/default/c-cm'), "c's ConfigMap reconciled", 10_000, {
      describe: () => `reconciled ${JSON.stringify(reconciled)}, groups ${JSON.stringify(Object.keys(c.status().groups ?? {}))}`,
    });
    expect(configMaps.store.listKeys().sort()).toEqual(['a/default/a-cm', 'c/default/c-cm']);
  });
});

/** A set of one cluster named `name`: the reading looks at nothing in it. */
const named = (name: string): readonly Cluster[] => [{ name, kubeConfig: undefined as never }];
const names = (sets: readonly (readonly Cluster[])[]): string[] => sets.map((set) => set.map((c) => c.name).join());

describe('the reading of a provider', () => {
  it('gives each reader the sets in the order the provider gave them when a reader gives one from inside the last (MC-15)', () => {
    const provider = new BehaviorSubject(named('s1'));
    const first: (readonly Cluster[])[] = [];
    const second: (readonly Cluster[])[] = [];
    const subs = [
      readingOf(provider).subscribe((set) => {
        first.push(set);
        if (set[0]?.name === 's2') provider.next(named('s3'));
      }),
      readingOf(provider).subscribe((set) => second.push(set)),
    ];
    provider.next(named('s2'));
    expect([names(first), names(second)]).toEqual([
      ['s1', 's2', 's3'],
      ['s1', 's2', 's3'],
    ]);
    // A reader that comes later is given the latest set at once.
    const third: (readonly Cluster[])[] = [];
    subs.push(readingOf(provider).subscribe((set) => third.push(set)));
    expect(names(third)).toEqual(['s3']);
    subs.forEach((s) => s.unsubscribe());
  });

  it('is one subscription of the provider while anything reads it, and a fresh one once nothing did', () => {
    let subscribed = 0;
    let live = 0;
    const provider = new Observable<readonly Cluster[]>((s) => {
      subscribed++;
      live++;
      s.next(named(`read ${subscribed}`));
      return () => live--;
    });
    const seen: (readonly Cluster[])[] = [];
    const a = readingOf(provider).subscribe((set) => seen.push(set));
    const b = readingOf(provider).subscribe((set) => seen.push(set));
    expect([subscribed, live, names(seen)]).toEqual([1, 1, ['read 1', 'read 1']]);
    a.unsubscribe();
    b.unsubscribe();
    expect(live).toBe(0);
    readingOf(provider).subscribe((set) => seen.push(set)).unsubscribe();
    expect([subscribed, live, names(seen).at(-1)]).toEqual([2, 0, 'read 2']);
  });
});
