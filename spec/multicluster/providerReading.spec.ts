import { BehaviorSubject, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { readingOf } from '../../src/multicluster/providerReading.js';
import type { Cluster } from '../../src/multicluster/types.js';

// The one reading of a provider that its informers and controllers share (MC-15); with an informer and a controller
// over a simulated fleet: multiClusterController.spec.ts.

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

  it('tells a reader that comes later its replay in the same turn: a set it gives while hearing it comes after it (MC-15)', () => {
    const provider = new BehaviorSubject(named('s1'));
    const first: (readonly Cluster[])[] = [];
    const subs = [readingOf(provider).subscribe((set) => first.push(set))];
    const late: (readonly Cluster[])[] = [];
    subs.push(
      readingOf(provider).subscribe((set) => {
        if (late.length === 0) provider.next(named('s2'));
        late.push(set);
      }),
    );
    expect([names(first), names(late)]).toEqual([
      ['s1', 's2'],
      ['s1', 's2'],
    ]);
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
