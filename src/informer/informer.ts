import type { KubeObject } from '../store/types.js';
import type { ListerWatcher } from '../sources/types.js';
import { SharedInformer } from './SharedInformer.js';
import type { Informer, InformerOptions } from './types.js';

export type { HandlerStatus, Informer, InformerOptions, InformerStatus, InformerStore, WhenSyncedOptions } from './types.js';

/**
 * Creates an informer: a live, indexed, in-memory copy of one resource that
 * tells your code what changed. It wires `reflect()` (list, then watch, with
 * relist and backoff) into `deltaFifo()` and applies each key's deltas to the
 * store before any handler or subscriber hears of them; with
 * `fifo: 'ordered'` it uses `orderedFifo()` instead, and applies each relist
 * to the store in one step.
 *
 * The informer is an Observable: subscribing starts it and the last
 * unsubscribe stops it, so `pipe()`, `merge()`, `combineLatest()` and
 * `firstValueFrom()` work on it as on any stream. `addHandler` (buffered,
 * for slow or async handlers) is client-go's shape of the same lifetime:
 * its registration is a subscription. `whenSynced` waits for the cache;
 * `status()` holds its state, sync and counters.
 *
 * Differences from client-go, by design (docs/semantics.md has them all): a
 * relist that finds an object unchanged tells only handlers whose resync is
 * due; an object re-created under the same name with a new UID is a delete
 * then an add, never an update; a handler that throws is reported, not fatal,
 * and one that keeps failing is slowed down.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource, unwrapTombstone } from 'rxkube';
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { filter, firstValueFrom } from 'rxjs';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const pods = informer(kubeSource(kc, 'v1/pods'));
 * // A delete may carry a tombstone (the object's last state was missed): unwrap it.
 * const sub = pods.subscribe((e) => console.log(e.type, unwrapTombstone(e.obj)?.metadata?.name));
 * await pods.whenSynced({ timeout: 30_000 });
 * const web = await firstValueFrom(pods.pipe(filter((e) => unwrapTombstone(e.obj)?.metadata?.labels?.app === 'web')));
 * sub.unsubscribe(); // the last subscriber: the watch ends
 * ```
 *
 * @param source where objects come from, e.g. `kubeSource(kc, 'v1/pods')`.
 * @param opts informer options.
 * @returns the informer, idle until subscribed.
 */
export function informer<T extends KubeObject = KubeObject>(source: ListerWatcher<T>, opts: InformerOptions<T> = {}): Informer<T> {
  return new SharedInformer<T>(source, opts);
}
