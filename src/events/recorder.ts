import type { KubeConfig } from '@kubernetes/client-node';
import { objectClient } from '../client/objectClient.js';
import type { ObjectClient } from '../client/types.js';
import { toError } from '../errors/reportError.js';
import { reportTo } from '../errors/reportTo.js';
import { heldBack, Throttle } from '../errors/throttle.js';
import { isNotFound } from '../errors/api/guards.js';
import type { KubeObject } from '../store/types.js';
import { checkDetails, eventName, microTime, NAME_LIMIT, objectKey, referenceTo, seriesKey, truncateNote, type EventBody } from './eventObject.js';
import { ObjectBuckets } from './objectBuckets.js';
import type { EventDetails, EventRecorder, EventRecorderOptions } from './types.js';
import { describeValue } from '../options/validate.js';

/** One Event and its series: what repeats of an event fold into. */
interface Series {
  readonly key: string;
  /** The Event as created (a new name when it expired and was created again). */
  body: EventBody;
  created: boolean;
  /** Occurrences so far; above 1 the Event carries `series.count`. */
  count: number;
  lastObservedMs: number;
  /** A write of this series waits in the queue: a repeat only needs to count. */
  queued: boolean;
}

/** At most this many series (and object buckets) are remembered; the least recently used are forgotten. */
const MAX_REMEMBERED = 4096;
/** `example.com/name`: a Kubernetes qualified name, as kube-apiserver checks `reportingController`. */
const QUALIFIED_NAME = /^(?:(?=[^/]{1,253}\/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?(?=[^/]{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function positive(opts: EventRecorderOptions, key: 'burst' | 'refillIntervalMs' | 'seriesWindowMs' | 'maxPending' | 'timeoutMs' | 'reportIntervalMs', fallback: number, integer = false): number {
  const v = opts[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || (integer && !Number.isSafeInteger(v))) {
    throw new TypeError(`${key}: expected a positive ${integer ? 'integer' : 'number'}, got ${describeValue(opts[key])}`);
  }
  return v;
}

class Recorder implements EventRecorder {
  readonly #kc: KubeConfig;
  readonly #controller: string;
  readonly #instance: string;
  readonly #window: number;
  readonly #maxPending: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  /** One token bucket per object: a noisy object cannot flood the API server with events. */
  readonly #buckets: ObjectBuckets;
  /** Write failures and drops, one per kind per interval. */
  readonly #report: (err: Error) => void;
  /** Series by their key, least recently observed first, so repeats fold into the Event they repeat. */
  readonly #series = new Map<string, Series>();
  /** Series with a write waiting, in publish order. */
  readonly #queue: Series[] = [];
  /** An Events client per namespace: Events live in the namespace of the object they are about. */
  readonly #clients = new Map<string, ObjectClient<KubeObject>>();
  /** The worker draining the queue while there is something to write; undefined when idle. */
  #running: Promise<void> | undefined;
  #inFlight = 0;
  #closed = false;
  /** Counters for status(). */
  #counts = { published: 0, written: 0, folded: 0, rateLimited: 0, dropped: 0, failed: 0 };
  /** Removes the abort listener once closed, so a long-lived signal keeps nothing alive. */
  #unlisten: (() => void) | undefined;

  constructor(kc: KubeConfig, opts: EventRecorderOptions) {
    if (opts === null || typeof opts !== 'object') throw new TypeError(`recorder: opts must be an object, got ${describeValue(opts)}`);
    const controller = opts.reportingController;
    if (typeof controller !== 'string' || !QUALIFIED_NAME.test(controller)) {
      throw new TypeError(`reportingController: expected a qualified name such as 'example.com/my-controller', got ${describeValue(controller)}`);
    }
    const instance = opts.reportingInstance;
    if (typeof instance !== 'string' || instance === '' || instance.length > NAME_LIMIT) {
      throw new TypeError(`reportingInstance: expected 1 to ${NAME_LIMIT} characters, got ${describeValue(instance)}`);
    }
    const burst = positive(opts, 'burst', 25, true);
    const refill = positive(opts, 'refillIntervalMs', 300_000);
    this.#window = positive(opts, 'seriesWindowMs', 360_000);
    this.#maxPending = positive(opts, 'maxPending', 1_000, true);
    this.#timeoutMs = positive(opts, 'timeoutMs', 10_000);
    const reportInterval = positive(opts, 'reportIntervalMs', 30_000);
    if (opts.onError !== undefined && typeof opts.onError !== 'function') throw new TypeError(`onError: expected a function, got ${describeValue(opts.onError)}`);
    if (opts.now !== undefined && typeof opts.now !== 'function') throw new TypeError(`now: expected a function, got ${describeValue(opts.now)}`);
    if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) throw new TypeError(`signal: expected an AbortSignal, got ${describeValue(opts.signal)}`);
    if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') throw new TypeError(`kc: expected a KubeConfig, got ${describeValue(kc)}`);
    this.#kc = kc;
    this.#controller = controller;
    this.#instance = instance;
    this.#now = opts.now ?? Date.now;
    this.#buckets = new ObjectBuckets(burst, refill, MAX_REMEMBERED);
    const throttle = new Throttle(reportInterval, this.#now);
    this.#report = (err) => {
      // A kind is the error's class and HTTP status, whatever object the write was about.
      const status = (err as { status?: unknown }).status;
      const passed = throttle.pass(`${err.name}|${typeof status === 'number' ? status : ''}`);
      if (passed === undefined) return;
      err.message += heldBack(passed);
      reportTo(opts.onError, err);
    };
    const signal = opts.signal;
    if (signal?.aborted === true) this.#closed = true;
    else if (signal !== undefined) {
      const onAbort = (): void => void this.close();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#unlisten = () => signal.removeEventListener('abort', onAbort);
    }
  }

  publish(regarding: KubeObject, event: EventDetails): void {
    this.#counts.published++;
    try {
      this.#publish(regarding, event);
    } catch (err) {
      // Whatever goes wrong here is the recorder's fault, never the caller's reconcile.
      this.#counts.dropped++;
      this.#report(toError(err));
    }
  }

  #publish(regarding: KubeObject, event: EventDetails): void {
    if (this.#closed) {
      this.#counts.dropped++;
      return;
    }
    const problem = checkDetails(event);
    if (problem !== undefined) return this.#drop(problem);
    const ref = referenceTo(regarding, 'regarding');
    if (ref instanceof TypeError) return this.#drop(ref);
    const related = event.related === undefined ? undefined : referenceTo(event.related, 'related');
    if (related instanceof TypeError) return this.#drop(related);
    const now = this.#now();
    const note = truncateNote(event.note ?? '');
    const key = seriesKey(ref, related, event, note);
    const known = this.#series.get(key);
    // A repeat within the window joins its series (EV-3); it needs a token only when it needs a write (EV-4).
    if (known !== undefined && now - known.lastObservedMs <= this.#window) {
      known.count++;
      known.lastObservedMs = now;
      this.#series.delete(key);
      this.#series.set(key, known);
      if (known.queued) this.#counts.folded++;
      else if (!this.#buckets.take(objectKey(ref), now)) this.#counts.rateLimited++;
      else this.#enqueue(known);
      return;
    }
    if (!this.#buckets.take(objectKey(ref), now)) {
      this.#counts.rateLimited++;
      return;
    }
    const body: EventBody = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // Events about cluster-scoped objects go to the default namespace, as kube-apiserver requires.
      metadata: { name: eventName(ref.name, now), namespace: ref.namespace ?? 'default' },
      eventTime: microTime(now),
      reportingController: this.#controller,
      reportingInstance: this.#instance,
      action: event.action,
      reason: event.reason,
      type: event.type,
      note,
      regarding: ref,
      ...(related !== undefined && { related }),
    };
    const series: Series = { key, body, created: false, count: 1, lastObservedMs: now, queued: false };
    this.#series.set(key, series);
    if (this.#series.size > MAX_REMEMBERED) this.#forgetOldest();
    this.#enqueue(series);
  }

  /** A malformed event: not the recorder's to fix, so it is reported rather than thrown into a reconcile. */
  #drop(problem: TypeError): void {
    this.#counts.dropped++;
    this.#report(new TypeError(`recorder: event not recorded: ${problem.message}`));
  }

  #forgetOldest(): void {
    for (const [key, s] of this.#series) {
      if (s.queued) continue;
      this.#series.delete(key);
      return;
    }
  }

  #enqueue(series: Series): void {
    if (this.#queue.length >= this.#maxPending) {
      this.#counts.dropped++;
      this.#report(new Error(`recorder: ${this.#queue.length} event writes are waiting (maxPending); an event about ${series.body.regarding.kind} ${series.body.regarding.name} was dropped`));
      return;
    }
    series.queued = true;
    this.#queue.push(series);
    this.#running ??= this.#drain();
  }

  async #drain(): Promise<void> {
    // Started from publish: the first write waits for the next turn, so publish returns before any I/O starts.
    await Promise.resolve();
    try {
      for (let series = this.#queue.shift(); series !== undefined; series = this.#queue.shift()) {
        series.queued = false;
        this.#inFlight++;
        try {
          await this.#write(series);
        } finally {
          this.#inFlight--;
        }
      }
    } finally {
      this.#running = undefined;
    }
  }

  #client(namespace: string): ObjectClient<KubeObject> {
    let client = this.#clients.get(namespace);
    if (client === undefined) {
      client = objectClient<KubeObject>(this.#kc, { group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true }, {
        namespace,
        timeoutMs: this.#timeoutMs,
        fieldManager: this.#controller.slice(0, 128),
      });
      this.#clients.set(namespace, client);
    }
    return client;
  }

  async #write(series: Series): Promise<void> {
    const seriesField = series.count > 1 ? { series: { count: series.count, lastObservedTime: microTime(series.lastObservedMs) } } : {};
    try {
      const client = this.#client(series.body.metadata.namespace);
      if (series.created) {
        try {
          await client.patch(series.body.metadata.name, seriesField, { type: 'merge' });
        } catch (err) {
          // Events expire (an hour by default): a series whose Event is gone starts a new one.
          if (!isNotFound(err)) throw err;
          const renamed = { ...series.body.metadata, name: eventName(series.body.regarding.name, this.#now()) };
          await client.create({ ...series.body, metadata: renamed, ...seriesField });
          series.body = { ...series.body, metadata: renamed };
        }
      } else {
        await client.create({ ...series.body, ...seriesField });
        series.created = true;
      }
      this.#counts.written++;
    } catch (err) {
      this.#counts.failed++;
      // An Event that could not be created is forgotten, so the next occurrence tries afresh.
      if (!series.created && this.#series.get(series.key) === series) this.#series.delete(series.key);
      this.#report(toError(err));
    }
  }

  /** EV-6: stop taking events, then wait for the queue to drain. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unlisten?.();
    this.#unlisten = undefined;
    while (this.#running !== undefined) await this.#running;
  }

  status(): ReturnType<EventRecorder['status']> {
    return { ...this.#counts, pending: this.#queue.length + this.#inFlight, closed: this.#closed };
  }
}

/**
 * Records Kubernetes Events about the objects a controller works on, on
 * `events.k8s.io/v1`, as client-go's events library (`EventRecorder`) and
 * kube-rs's `Recorder` do: what `kubectl describe` and `kubectl events`
 * show under an object.
 *
 * `publish` never blocks and never fails the reconcile that calls it: it
 * returns at once and the write happens in the background, one at a time,
 * from a bounded queue. Repeats of an event — same object, related object,
 * type, reason, action and note — within `seriesWindowMs` of the last
 * occurrence are folded into one Event whose `series.count` and
 * `series.lastObservedTime` are updated by a patch; repeats that arrive
 * while that Event's write waits cost no request at all. Each object has a
 * token bucket (`burst`, then one every `refillIntervalMs`) so a hot loop
 * cannot flood the API server; a repeat over the limit still counts in its
 * series. Failures (and events dropped) go to `onError` or the process-wide
 * error reporter, one per kind of failure per `reportIntervalMs`. A write
 * that fails is not retried: the next occurrence of the event tries again.
 *
 * `close()` (or aborting `signal`) stops taking events, writes what was
 * published, and leaves no timer behind. Events about a cluster-scoped
 * object are written to the `default` namespace.
 *
 * ## Example
 * ```ts
 * import { controller, informer, kubeSource, recorder } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const events = recorder(kc, { reportingController: 'example.com/deploy-watcher', reportingInstance: process.env.POD_NAME ?? 'local' });
 * const ctl = controller({
 *   for: informer(kubeSource(kc, 'apps/v1/deployments')),
 *   reconcile: (d) => {
 *     events.publish(d, { type: 'Normal', reason: 'Seen', action: 'Reconcile', note: `generation ${d.metadata?.generation}` });
 *     return undefined;
 *   },
 * });
 * ```
 *
 * @param kc The kubeconfig; its current context chooses cluster and user.
 * @param opts Who reports (`reportingController`, `reportingInstance`), the rate limits, the series window and where failures go.
 * @returns The recorder.
 */
export function recorder(kc: KubeConfig, opts: EventRecorderOptions): EventRecorder {
  return new Recorder(kc, opts);
}
