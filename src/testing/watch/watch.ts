import type { ServerResponse } from 'node:http';
import type { FieldSelector } from '../../store/fieldSelector.js';
import type { LabelSelector } from '../../store/labelSelector.js';
import { isStreamFault, type FaultBoard } from '../faults/faults.js';
import type { HistoryEvent } from '../storage/history.js';
import type { StoredObject } from '../storage/storedObject.js';
import type { MetaVersion } from '../server/negotiate.js';
import { objectJson } from '../server/partialObjectMetadata.js';
import { lineInServedVersion } from '../server/servedVersion.js';
import type { ResourceType } from '../storage/resources.js';
import type { Sink } from '../server/sink.js';
import { defaultReason, StatusError } from '../server/status.js';
import { DelayedOutput, WatchDelays } from './watchDelay.js';
import { timerDelay } from '../../options/timerDelay.js';

/** What a list or watch request narrows the resource to. */
export interface ObjectFilter {
  readonly namespace: string | undefined;
  readonly label: LabelSelector | undefined;
  readonly field: FieldSelector | undefined;
}

/** True when the stored object is in the filter's namespace and matches both selectors. */
export function passes(filter: ObjectFilter, o: StoredObject): boolean {
  if (filter.namespace !== undefined && o.namespace !== filter.namespace) return false;
  if (filter.label !== undefined) {
    const meta = o.obj['metadata'] as { labels?: Record<string, string> };
    if (!filter.label.matches(meta.labels)) return false;
  }
  return filter.field === undefined || filter.field.matches(o.obj);
}

/** True when the filter has selectors (a namespace alone never changes membership). */
function hasSelectors(filter: ObjectFilter): boolean {
  return filter.label !== undefined || filter.field !== undefined;
}

/** How long before a timeoutSeconds deadline the last bookmark is offered, as kube-apiserver's watch cache does. */
const PRE_DEADLINE_MS = 2_000;

/** The default garbage of the malformedLine fault: a JSON object cut short. */
const DEFAULT_MALFORMED = '{"type":"ADDED","object":{"kind":';

/** The ERROR event line carrying a Status. */
export function errorLine(err: StatusError): string {
  return `{"type":"ERROR","object":${JSON.stringify(err.status)}}\n`;
}

/**
 * One open watch response. Lines are gathered and written once per tick, so
 * a burst of writes costs one socket write per watcher, and each line is a
 * string shared with every other watcher of the same event.
 */
export class Watcher {
  readonly type: ResourceType;
  readonly filter: ObjectFilter;
  readonly bookmarks: boolean;
  /** Objects go out as PartialObjectMetadata of this version (undefined: as stored). */
  readonly view: MetaVersion | undefined;
  // For flush scheduling, fault lookup and counters.
  readonly #hub: WatchHub;
  // To drop the connection on destroy().
  readonly #res: ServerResponse;
  // Direct or trickled; every byte of the body goes through it.
  readonly #sink: Sink;
  // Lines not yet handed to the socket; joined into one write per flush.
  #pending: string[] = [];
  // The newest resourceVersion this watcher was sent (or asked to start from): a bookmark goes out only when it would move the client forward.
  #lastRv: number;
  // Events at or below the requested resourceVersion were already seen by the client (or lie in a future it asked to skip).
  readonly #startRv: number;
  // Set once the response is ended or dropped; later events are ignored.
  #closed = false;
  // The timeoutSeconds timer, cleared when the watch ends first.
  #timeout: NodeJS.Timeout | undefined;
  // The bookmark sent shortly before the timeoutSeconds deadline, cleared with the watch.
  #preDeadline: NodeJS.Timeout | undefined;
  // The silentWatch fault: the connection stays open and nothing more is ever written.
  #silent = false;
  // Output held back by faults.delayWatches(); created the first time a delay applies.
  #delayed: DelayedOutput | undefined;

  constructor(
    hub: WatchHub,
    type: ResourceType,
    filter: ObjectFilter,
    bookmarks: boolean,
    view: MetaVersion | undefined,
    res: ServerResponse,
    sink: Sink,
    startRv: number,
  ) {
    this.#hub = hub;
    this.type = type;
    this.filter = filter;
    this.bookmarks = bookmarks;
    this.view = view;
    this.#res = res;
    this.#sink = sink;
    this.#lastRv = startRv;
    this.#startRv = startRv;
    res.once('close', () => this.#detach());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Ends the watch cleanly after `seconds` (timeoutSeconds). A watcher that
   * allows bookmarks is offered one shortly before the deadline (2 s, or half
   * the timeout when that is shorter), as kube-apiserver does so the client
   * resumes from the newest resourceVersion; like the real server it is only
   * sent when that resourceVersion is newer than what the watcher has seen.
   */
  endAfter(seconds: number, currentRv: () => number): void {
    const ms = seconds * 1000;
    if (this.bookmarks) {
      this.#preDeadline = setTimeout(() => this.bookmark(currentRv()), timerDelay(ms - Math.min(PRE_DEADLINE_MS, ms / 2)));
      this.#preDeadline.unref();
    }
    this.#timeout = setTimeout(() => this.end(), timerDelay(ms));
    this.#timeout.unref();
  }

  /** Routes one write to this watcher, turning selector transitions into ADDED/DELETED. */
  offer(event: HistoryEvent): void {
    if (this.#closed || event.rv <= this.#startRv) return;
    const filter = this.filter;
    if (filter.namespace !== undefined && event.cur.namespace !== filter.namespace) return;
    const view = this.view;
    if (!hasSelectors(filter)) {
      this.push(event.line(view), event.rv);
      return;
    }
    const now = event.type !== 'DELETED' && passes(filter, event.cur);
    const before = event.prev !== undefined && passes(filter, event.prev);
    if (event.type === 'DELETED') {
      if (before) this.push(event.line(view), event.rv);
    } else if (now && before) this.push(event.line(view), event.rv);
    else if (now) this.push(event.enterLine(view), event.rv);
    else if (before) this.push(event.leaveLine(view), event.rv);
  }

  /** Queues an initial ADDED for a stored object. */
  pushAdded(o: StoredObject): void {
    this.push(`{"type":"ADDED","object":${objectJson(o, this.view, this.type)}}\n`, o.rv);
  }

  /**
   * Goes quiet for good (the silentWatch fault): nothing queued or later is
   * written, and the timeoutSeconds deadline no longer ends the watch; the
   * connection stays open until the client, `closeWatches()` or a stop ends it.
   */
  silence(): void {
    this.#silent = true;
    this.#pending = [];
    this.#clearTimers();
  }

  /**
   * Queues a BOOKMARK at `rv` when it is newer than anything this watcher was
   * sent, as kube-apiserver skips bookmarks that would not move a client
   * forward. The end-of-initial-events bookmark of a watch-list is always
   * sent (at the newest resourceVersion sent when that is later).
   */
  bookmark(rv: number, initialEventsEnd = false): void {
    if (this.#closed) return;
    if (!initialEventsEnd && rv <= this.#lastRv) return;
    const at = Math.max(rv, this.#lastRv);
    const annotations = initialEventsEnd ? ',"annotations":{"k8s.io/initial-events-end":"true"}' : '';
    // A metadata-only watch gets its bookmarks converted too, as kube-apiserver converts every event's object.
    const kind = this.view === undefined ? this.type.kind : 'PartialObjectMetadata';
    const apiVersion = this.view ?? this.type.apiVersion;
    this.push(`{"type":"BOOKMARK","object":{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":{"resourceVersion":"${at}"${annotations}}}}\n`, at, false);
  }

  /**
   * Queues one line, letting an armed stream fault act on it first when it
   * is an object event (bookmarks never take a fault: they are not "the
   * next event" a test is waiting for).
   */
  push(text: string, rv: number, isObjectEvent = true): void {
    if (this.#closed || this.#silent) return;
    // Lines are shared by every watcher of the store; one version of a CRD shows them in its own apiVersion.
    // A metadata-only watcher's objects are PartialObjectMetadata, whose apiVersion is meta.k8s.io's, not the CRD's.
    const line = isObjectEvent && this.view === undefined && this.type.storage !== undefined ? lineInServedVersion(text, this.type) : text;
    const hub = this.#hub;
    const wasEmpty = this.#pending.length === 0;
    if (isObjectEvent && hub.faults.hasStreamFaults) {
      const fault = hub.faults.take('watch', this.type.id, isStreamFault);
      if (fault !== undefined) {
        if (fault.type === 'malformedLine') {
          const garbage = fault.line ?? DEFAULT_MALFORMED;
          this.#pending.push(garbage.endsWith('\n') ? garbage : `${garbage}\n`);
        } else if (fault.type === 'resetMidLine' || fault.type === 'endMidLine') {
          this.flush();
          this.#closed = true;
          this.#detach();
          const half = line.slice(0, Math.max(1, line.length >> 1));
          if (fault.type === 'resetMidLine') this.#sink.writeThenReset(half);
          else {
            this.#sink.write(half);
            this.#sink.end();
          }
          return;
        } else if (fault.type === 'errorEvent') {
          this.sendError(injectedError(fault.status ?? 410, fault.reason, fault.message));
          return;
        } else if (fault.type === 'silentWatch') {
          this.flush();
          this.silence();
          return;
        }
      }
    }
    this.#pending.push(line);
    if (rv > this.#lastRv) this.#lastRv = rv;
    hub.counters.eventsSent++;
    if (wasEmpty) hub.markDirty(this);
  }

  /** Sends an ERROR event with the Status and ends the stream. */
  sendError(err: StatusError): void {
    if (this.#closed || this.#silent) return;
    this.#pending.push(errorLine(err));
    this.#hub.counters.eventsSent++;
    this.end();
  }

  /** Hands the queued lines to the socket in one write (or to a delay of faults.delayWatches()). */
  flush(): void {
    if (this.#pending.length === 0) return;
    const chunk = this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join('');
    this.#pending = [];
    const delay = this.#hub.delays.for(this.type.id);
    if (delay === undefined && this.#delayed?.busy !== true) {
      this.#sink.write(chunk);
      return;
    }
    if (this.#delayed === undefined) {
      const out = new DelayedOutput(this.#sink);
      this.#res.once('close', () => out.drop());
      this.#delayed = out;
    }
    this.#delayed.write(chunk, delay);
  }

  /** Ends the response cleanly after what is queued (held lines included). */
  end(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    this.#detach();
    if (this.#delayed?.busy === true) this.#delayed.end();
    else this.#sink.end();
  }

  /** Drops the connection without a clean end. */
  destroy(): void {
    this.#closed = true;
    this.#detach();
    this.#delayed?.drop();
    this.#res.destroy();
  }

  #clearTimers(): void {
    if (this.#timeout !== undefined) clearTimeout(this.#timeout);
    if (this.#preDeadline !== undefined) clearTimeout(this.#preDeadline);
    this.#timeout = undefined;
    this.#preDeadline = undefined;
  }

  #detach(): void {
    this.#closed = true;
    this.#clearTimers();
    this.#pending = [];
    this.#hub.remove(this);
  }
}

/** The Status of an injected ERROR event or status fault. */
export function injectedError(code: number, reason: string | undefined, message: string | undefined): StatusError {
  const r = reason ?? defaultReason(code);
  const text = message ?? (code === 410 ? 'too old resource version: injected fault' : `injected fault: ${r}`);
  return new StatusError(code, r, text);
}

/** The store a watcher's events come from (every version of a CRD shares one). */
function storeOf(w: Watcher): string {
  return (w.type.storage ?? w.type).id;
}

/** Every open watch, by resource, and the once-per-tick flush of their queued lines. */
export class WatchHub {
  readonly faults: FaultBoard;
  // Delays of faults.delayWatches(), looked up by every flush.
  readonly delays = new WatchDelays();
  // What `server.stats` reports of the watches.
  readonly counters = { eventsSent: 0, watchesStarted: 0 };
  readonly #byResource = new Map<string, Set<Watcher>>();
  // Watchers with queued lines; flushed together on the next turn of the event loop.
  readonly #dirty = new Set<Watcher>();
  #flushScheduled = false;

  constructor(faults: FaultBoard) {
    this.faults = faults;
  }

  get open(): number {
    let n = 0;
    for (const set of this.#byResource.values()) n += set.size;
    return n;
  }

  add(w: Watcher): void {
    let set = this.#byResource.get(storeOf(w));
    if (set === undefined) {
      set = new Set();
      this.#byResource.set(storeOf(w), set);
    }
    set.add(w);
    this.counters.watchesStarted++;
  }

  remove(w: Watcher): void {
    this.#byResource.get(storeOf(w))?.delete(w);
    this.#dirty.delete(w);
  }

  dispatch(event: HistoryEvent): void {
    const set = this.#byResource.get(event.resource.id);
    if (set === undefined || set.size === 0) return;
    for (const w of set) w.offer(event);
  }

  markDirty(w: Watcher): void {
    this.#dirty.add(w);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.flushAll());
  }

  flushAll(): void {
    this.#flushScheduled = false;
    const dirty = [...this.#dirty];
    this.#dirty.clear();
    for (const w of dirty) w.flush();
  }

  /** Offers a BOOKMARK at `rv` to every watcher that asked for bookmarks (each takes it only if it moves that watcher forward). */
  bookmarkAll(rv: number): void {
    for (const set of this.#byResource.values()) for (const w of set) if (w.bookmarks) w.bookmark(rv);
  }

  /** Ends every watch of one resource cleanly, its queued lines first (the resource is no longer served). */
  endResource(id: string): void {
    for (const set of [...this.#byResource.values()]) for (const w of [...set]) if (w.type.id === id) w.end();
  }

  /** Ends every watch cleanly (`destroy`: drops them instead). */
  closeAll(destroy: boolean): void {
    for (const w of [...this.#byResource.values()].flatMap((set) => [...set])) {
      if (destroy) w.destroy();
      else w.end();
    }
  }
}
