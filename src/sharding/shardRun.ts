import { Subscription } from 'rxjs';
import { isConflict, isNotFound } from '../sources/errors/guards.js';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import type { CustomResourceRef } from '../sources/resources.js';
import { controller, type Controller } from '../controller/controller.js';
import type { ControllerSource, Reconciler } from '../controller/types.js';
import { informer } from '../informer/informer.js';
import { kubeSource } from '../sources/kubeSource.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { KubeObject } from '../store/types.js';
import { workQueue } from '../workqueue/WorkQueue.js';
import type { ResolvedShardedOptions, ShardEvent } from './shardedOptions.js';

/** Thrown to retry a release whose object changed under it; not a failure to report. */
class StaleRelease extends Error {}

/**
 * One membership term of a replica: its share's informer (filtered by the
 * API server on its shard label), the controller reconciling it, and the
 * hand-over of objects the sharder marked for draining. A term is never
 * restarted; a replica that becomes a member again starts a new one, with a
 * fresh informer that lists its share afresh.
 */
export class ShardRun<T extends KubeObject> {
  readonly #c: ResolvedShardedOptions<T>;
  readonly #emit: (e: ShardEvent<T>) => void;
  readonly #source: ControllerSource<T>;
  readonly #controller: Controller<T>;
  readonly #subs = new Subscription();
  // Aborted when membership is lost: reconciles must stop, others may own their objects soon.
  readonly #lost = new AbortController();
  // Keys this replica is letting go of: no reconcile starts for them any more.
  readonly #draining = new Set<string>();
  // The reconcile in flight per key, which a release waits for.
  readonly #inFlight = new Map<string, Promise<unknown>>();
  // Label writes per namespace.
  readonly #clients = new Map<string, ObjectClient<T>>();
  #stopped: Promise<void> | undefined;

  constructor(config: ResolvedShardedOptions<T>, emit: (e: ShardEvent<T>) => void) {
    this.#c = config;
    this.#emit = emit;
    this.#source = config.source(config.labels.selectorFor(config.identity));
    const guarded: Reconciler<T> = (obj, ctx) => {
      if (this.#draining.has(ctx.key) || obj.metadata?.labels?.[config.labels.drain] !== undefined) return undefined;
      const signal = AbortSignal.any([ctx.signal, this.#lost.signal]);
      // Runs the user's reconcile synchronously up to its first await, so what it does first happens now.
      const running = (async () => config.reconcile(obj, { ...ctx, signal }))();
      this.#inFlight.set(ctx.key, running);
      const forget = (): void => {
        if (this.#inFlight.get(ctx.key) === running) this.#inFlight.delete(ctx.key);
      };
      running.then(forget, forget);
      return running;
    };
    const selector = config.labels.selectorFor(config.identity);
    const owns = config.owns.map(({ resource, kind, apiVersion, controllerOnly, namespaced }) => ({
      source: informer(kubeSource(config.kc, resource as never, { labelSelector: selector, ...(config.namespace !== undefined && { namespace: config.namespace }) }), {
        onError: config.report,
      }) as unknown as ControllerSource<KubeObject>,
      ...(kind !== undefined && { kind }),
      ...(apiVersion !== undefined && { apiVersion }),
      ...(controllerOnly !== undefined && { controllerOnly }),
      ...(namespaced !== undefined && { namespaced }),
    }));
    this.#controller = controller<T>({
      for: this.#source,
      owns,
      reconcile: guarded,
      name: config.controller,
      concurrency: config.concurrency,
      resyncPeriod: config.resyncPeriod,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      ...(config.errorPolicy !== undefined && { errorPolicy: config.errorPolicy }),
      ...(config.onError !== undefined && { onError: config.onError }),
    });
  }

  /** Starts the informer, the controller and the releases. */
  start(): void {
    const { labels } = this.#c;
    const releases = workQueue<string>({ name: `${this.#c.controller}-release`, onError: (e) => this.#c.report(e) });
    this.#subs.add(() => releases.shutDown());
    this.#subs.add(
      this.#source.subscribe({
        next: (ev) => {
          const obj = ev.type === 'delete' ? unwrapTombstone(ev.obj) : ev.obj;
          if (obj === undefined) return;
          const key = this.#source.store.keyOf(obj);
          if (ev.type === 'delete' || obj.metadata?.labels?.[labels.drain] === undefined) {
            // Gone from this share, or the drain was taken back by hand: reconciles may run again.
            this.#draining.delete(key);
          } else if (!this.#draining.has(key)) {
            this.#draining.add(key);
            releases.add(key);
          }
        },
        error: (err: unknown) => this.#c.report(err),
      }),
    );
    this.#subs.add(
      releases.process((key, signal) => this.#release(key, signal), { concurrency: 4 }).subscribe((o) => {
        if (!o.ok && !(o.error instanceof StaleRelease)) this.#c.report(o.error);
      }),
    );
    this.#subs.add(
      this.#controller.subscribe({
        next: (outcome) => this.#emit({ type: 'outcome', outcome }),
        error: (err: unknown) => this.#c.report(err),
      }),
    );
  }

  /**
   * Ends the term: no new reconcile starts, and once those in flight are
   * done (or `shutdownTimeoutMs` passed) the informer is let go. With
   * `lost`, reconciles in flight see their signal abort at once.
   */
  stop(lost: boolean): Promise<void> {
    if (lost) this.#lost.abort(new Error(`${this.#c.identity} is no longer a member of ${this.#c.controller}`));
    if (this.#stopped === undefined) {
      this.#subs.unsubscribe();
      this.#stopped = this.#controller.shutdown();
    }
    return this.#stopped;
  }

  /** Lets go of a drained object: after its reconcile in flight, both labels are removed, conditional on what was read. */
  async #release(key: string, signal: AbortSignal): Promise<void> {
    await this.#inFlight.get(key)?.catch(() => undefined);
    if (signal.aborted) return;
    const obj = this.#source.store.getByKey(key);
    const { labels, identity } = this.#c;
    const md = obj?.metadata;
    if (md?.name === undefined || md.labels?.[labels.shard] !== identity || md.labels[labels.drain] === undefined) return;
    const ns = md.namespace;
    let client = this.#clients.get(ns ?? '');
    if (client === undefined) {
      client = objectClient<T>(this.#c.kc, this.#c.resource as CustomResourceRef, { ...(ns !== undefined && ns !== '' && { namespace: ns }), timeoutMs: this.#c.requestTimeoutMs });
      this.#clients.set(ns ?? '', client);
    }
    try {
      await client.patch(md.name, { metadata: { resourceVersion: md.resourceVersion, labels: { [labels.shard]: null, [labels.drain]: null } } }, { type: 'merge', signal });
    } catch (err) {
      if (isNotFound(err)) return;
      // The object changed since it was read: try again with the version the informer brings.
      if (isConflict(err)) throw new StaleRelease(`${key} changed while being released`);
      throw err;
    }
    this.#emit({ type: 'released', key });
  }
}
