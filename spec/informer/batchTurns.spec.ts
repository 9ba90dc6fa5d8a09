/**
 * PF-41: the events of one arrival (a chunk of a watch body) are applied one at a time, and each event's
 * handlers are called before the next event is applied, however many events the arrival held. The turn
 * between two events is skipped only when nothing waits for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/informer.js';
import type { Registration } from '../../src/informer/registration.js';
import type { ListerWatcher, ObjectList, WatchEvent } from '../../src/sources/types.js';
import { waitFor } from '../helpers/waitFor.js';

interface Pod {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string };
}
const pod = (rv: number): Pod => ({ metadata: { name: 'a', namespace: 'default', resourceVersion: String(rv) } });

/** Lists pod a at resourceVersion 1, then watches one arrival of MODIFIED events at 2…`last`, and holds the watch open. */
function oneArrival(last: number): ListerWatcher<Pod> {
  const events: WatchEvent<Pod>[] = [];
  for (let rv = 2; rv <= last; rv++) events.push({ type: 'MODIFIED', object: pod(rv) });
  async function* open<E>(items: readonly E[], signal: AbortSignal): AsyncGenerator<E> {
    for (const item of items) yield item;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  }
  return {
    supportsWatchList: false,
    list: (): Promise<ObjectList<Pod>> => Promise.resolve({ metadata: { resourceVersion: '1' }, items: [pod(1)] }),
    watch: (_, signal) => open(events, signal),
    watchBatches: (_, signal) => open([events], signal),
  };
}

const regs: Registration[] = [];
afterEach(() => {
  for (const r of regs.splice(0)) r.unsubscribe();
});

describe('one arrival of several events', () => {
  it('calls each handler with the store holding that event, not a later one of the same arrival', async () => {
    const i = informer<Pod>(oneArrival(6), { onError: () => {} });
    const seen: string[][] = [[], []];
    for (const h of [0, 1]) {
      regs.push(
        i.addHandler({
          update: (_old, obj) => void seen[h]?.push(`${obj.metadata.resourceVersion}:${i.store.getByKey('default/a')?.metadata.resourceVersion}`),
        }),
      );
    }
    await waitFor(() => seen.every((s) => s.length === 5), 'every handler to hear the five updates');
    for (const s of seen) expect(s).toEqual(['2:2', '3:3', '4:4', '5:5', '6:6']);
  });

  it('with only an observer (told at once), applies and tells every event, in order', async () => {
    const i = informer<Pod>(oneArrival(6), { onError: () => {} });
    const seen: string[] = [];
    const sub = i.subscribe((ev) => {
      if (ev.type === 'update') seen.push(`${ev.obj.metadata.resourceVersion}:${i.store.getByKey('default/a')?.metadata.resourceVersion}`);
    });
    try {
      await waitFor(() => seen.length === 5, 'the observer to hear the five updates');
      expect(seen).toEqual(['2:2', '3:3', '4:4', '5:5', '6:6']);
    } finally {
      sub.unsubscribe();
    }
  });

  it('a handler beside an observer still hears each event before the next is applied', async () => {
    const i = informer<Pod>(oneArrival(5), { onError: () => {} });
    const observed: string[] = [];
    const handled: string[] = [];
    const sub = i.subscribe((ev) => void (ev.type === 'update' && observed.push(ev.obj.metadata.resourceVersion)));
    regs.push(i.addHandler({ update: (_old, obj) => void handled.push(`${obj.metadata.resourceVersion}:${i.store.getByKey('default/a')?.metadata.resourceVersion}`) }));
    try {
      await waitFor(() => handled.length === 4, 'the handler to hear the four updates');
      expect(handled).toEqual(['2:2', '3:3', '4:4', '5:5']);
      expect(observed).toEqual(['2', '3', '4', '5']);
    } finally {
      sub.unsubscribe();
    }
  });
});
