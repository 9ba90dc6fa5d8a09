import { printable } from '../errors/printable.js';
import { Throttle } from '../errors/throttle.js';
import { ReadYourWritesTimeoutError } from './ReadYourWritesTimeoutError.js';
import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';
import { seen, counts, writeLog, type CacheView, type WriteEntry } from '../client/writeLog.js';
import { toError } from '../errors/reportError.js';
import { resourceKey } from '../sources/identity.js';
import { booleanOption, numberOption } from '../options/validate.js';
import type { Triggers } from './triggers.js';
import type { ControllerSource } from './types.js';
import { timerDelay } from '../options/timerDelay.js';

/** `readYourWrites` and `readYourWritesTimeoutMs`, checked. */
export interface ReadYourWritesSettings {
  readonly timeoutMs: number;
}

/**
 * Checks the two options; `undefined` when the wait is turned off.
 *
 * @throws {TypeError} naming the option and the value.
 */
export function resolveReadYourWrites(enabled: unknown, timeoutMs: unknown): ReadYourWritesSettings | undefined {
  booleanOption('controller', 'readYourWrites', enabled, true);
  numberOption('controller', 'readYourWritesTimeoutMs', timeoutMs, 0);
  return enabled === false ? undefined : { timeoutMs: (timeoutMs as number | undefined) ?? 5_000 };
}

/** A source whose cache can be compared with the write log: it has an identity and a resourceVersion. */
interface Watched extends CacheView {
  readonly source: ControllerSource<unknown>;
  /** The source is the primary one: only the object being reconciled is waited for there (RYW-2). */
  readonly primary: boolean;
}

/** One write a wait is for, and the cache that must show it. */
interface PendingWrite {
  readonly cache: Watched;
  readonly entry: WriteEntry;
}

/** Timeouts are reported at most this often; the next report says how many were left out. */
const REPORT_EVERY_MS = 30_000;
/** How often a source without `resourceVersion$` is looked at while a wait is on. */
const POLL_MS = 10;

/**
 * The controller's side of read-your-own-writes (docs/semantics.md RYW-1…RYW-6):
 * before a reconcile reads key K, wait, bounded, until the caches show the
 * writes this process made through `objectClient` — for the primary source,
 * the last write of K itself; for every other source, every write to its
 * resource it will hear of.
 */
export class ReadYourWrites {
  readonly #watched: readonly Watched[];
  readonly #timeoutMs: number;
  readonly #scheduler: SchedulerLike;
  readonly #name: string;
  // The run whose caches the log counts when it forgets writes everyone saw: the run's reconcile signal.
  #registeredFor: AbortSignal | undefined;
  // Timeouts are reported at most every REPORT_EVERY_MS, all of one kind; the ones in between are counted into the next report.
  readonly #reports: Throttle;
  // Counters over the controller's life, for status(): reads that had to wait, and waits that gave up.
  #waits = 0;
  #timeouts = 0;

  constructor(triggers: Triggers<unknown>, settings: ReadYourWritesSettings, scheduler: SchedulerLike, name: string) {
    const watched: Watched[] = [];
    const add = (source: ControllerSource<unknown>, primary: boolean): void => {
      const identity = source.identity;
      const store = source.store;
      if (identity === undefined || typeof store.lastSyncResourceVersion !== 'function') return;
      if (watched.some((w) => w.source === source && w.primary === primary)) return;
      const lastSync = store.lastSyncResourceVersion.bind(store);
      watched.push({ source, primary, identity, resource: resourceKey(identity), store: { getByKey: (k) => store.getByKey(k), lastSyncResourceVersion: lastSync } });
    };
    add(triggers.primary, true);
    for (const o of triggers.owns) add(o.source as ControllerSource<unknown>, false);
    for (const w of triggers.watches) add(w.source, false);
    this.#watched = watched;
    this.#timeoutMs = settings.timeoutMs;
    this.#scheduler = scheduler;
    this.#reports = new Throttle(REPORT_EVERY_MS, () => scheduler.now());
    this.#name = name;
  }

  /** Reads that waited for a cache, and waits that ran out of `readYourWritesTimeoutMs`, over the controller's life. */
  counts(): { readonly waits: number; readonly timeouts: number } {
    return { waits: this.#waits, timeouts: this.#timeouts };
  }

  /**
   * Resolves once every cache shows what it must before `key` is read, or
   * after the timeout (reported), or when `signal` aborts; `undefined` at
   * once when there is nothing to wait for. Never rejects.
   */
  wait(key: string, signal: AbortSignal, report: (err: Error) => void): Promise<void> | undefined {
    if (this.#watched.length === 0) return undefined;
    try {
      this.#register(signal);
      if (writeLog.size === 0) return undefined;
      const awaited = this.#unseen(key);
      if (awaited.length === 0 || signal.aborted || this.#timeoutMs === 0) return undefined;
      this.#waits++;
      return this.#waitFor(key, awaited, signal, report);
    } catch (err) {
      report(toError(err));
      return undefined;
    }
  }

  /** Lets the log forget writes once this run's caches saw them; let go when the run is over. */
  #register(signal: AbortSignal): void {
    if (this.#registeredFor === signal || signal.aborted) return;
    this.#registeredFor = signal;
    const unregister = this.#watched.map((w) => writeLog.register(w));
    signal.addEventListener('abort', () => {
      for (const u of unregister) u();
      if (this.#registeredFor === signal) this.#registeredFor = undefined;
    }, { once: true });
  }

  #unseen(key: string): PendingWrite[] {
    const awaited: PendingWrite[] = [];
    for (const cache of this.#watched) {
      writeLog.prune(cache);
      if (cache.primary) {
        const entry = writeLog.unseenObject(cache, key);
        if (entry !== undefined) awaited.push({ cache, entry });
      } else {
        for (const entry of writeLog.unseenResource(cache)) awaited.push({ cache, entry });
      }
    }
    return awaited;
  }

  #waitFor(key: string, awaited: PendingWrite[], signal: AbortSignal, report: (err: Error) => void): Promise<void> {
    return new Promise<void>((resolve) => {
      let left = awaited;
      const subscriptions: Subscription[] = [];
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        for (const s of subscriptions) s.unsubscribe();
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const check = (): void => {
        if (finished) return;
        try {
          // Writes made after the wait began are not waited for: no read of this reconcile can depend on them.
          left = left.filter(({ cache, entry }) => counts(cache, entry) && !seen(cache, entry));
        } catch (err) {
          report(toError(err));
          left = [];
        }
        if (left.length === 0) finish();
      };
      signal.addEventListener('abort', finish, { once: true });
      let polled = false;
      for (const cache of new Set(awaited.map((a) => a.cache))) {
        const changes = cache.source.resourceVersion$;
        if (changes !== undefined) subscriptions.push(changes.subscribe({ next: check, error: check, complete: check }));
        else polled = true;
      }
      if (polled) {
        subscriptions.push(
          this.#scheduler.schedule(function poll(this: SchedulerAction<undefined>) {
            check();
            if (!finished) this.schedule(undefined, POLL_MS);
          }, POLL_MS),
        );
      }
      subscriptions.push(
        this.#scheduler.schedule(() => {
          check();
          if (finished) return;
          this.#timedOut(key, left, report);
          finish();
        }, timerDelay(this.#timeoutMs)),
      );
      // The cache may have moved between the first look and the subscriptions.
      check();
    });
  }

  #timedOut(key: string, left: readonly PendingWrite[], report: (err: Error) => void): void {
    this.#timeouts++;
    const passed = this.#reports.pass('timeout');
    if (passed === undefined) return;
    const { cache, entry } = left[0] as PendingWrite;
    const what = entry.rv === undefined ? `deletion of ${entry.key} (uid ${entry.uid ?? '?'})` : `write of ${entry.key} at resourceVersion ${entry.rv}`;
    const others = left.length > 1 ? ` and ${left.length - 1} more write(s)` : '';
    const earlier = passed.held > 0 ? ` (${passed.held} earlier wait(s) timed out since the last report)` : '';
    const name = cache.source.name ?? cache.identity.plural;
    // Keys and versions are an object's and a server's words (HI-70): the message holds them escaped.
    report(
      new ReadYourWritesTimeoutError(
        printable(
          `${this.#name}: the cache of ${name} (at resourceVersion ${JSON.stringify(cache.store.lastSyncResourceVersion())}) still did not show this process's ${what}${others} after ${this.#timeoutMs} ms (readYourWritesTimeoutMs); reconciling ${key} from it anyway${earlier}`,
        ),
        { key: entry.key, resourceVersion: entry.rv, cache: name, timeoutMs: this.#timeoutMs },
      ),
    );
  }
}
