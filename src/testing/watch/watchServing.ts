import type { ServerResponse } from 'node:http';
import type { ServerContext } from '../context.js';
import { isWatchOpenFault } from '../faults/faults.js';
import type { HistoryEvent } from '../storage/history.js';
import { filterFor } from '../list/listing.js';
import type { MetaVersion } from '../server/negotiate.js';
import type { Sink } from '../server/sink.js';
import { badRequest, invalid, invalidFields, StatusError, tooLargeResourceVersion, type FieldCause } from '../server/status.js';
import { keyRange } from '../storage/storageKeys.js';
import { parseRv, type Target } from '../server/target.js';
import { injectedError, passes, Watcher } from './watch.js';

/**
 * Serves a WATCH: checks its options as kube-apiserver does (422 with every
 * field error at once), answers 200, sends the initial state or replays
 * history from the requested resourceVersion (an ERROR 410 event when it is
 * too old), then hands the watcher to the hub for live events.
 *
 * @param view objects go out as PartialObjectMetadata of this version when set.
 */
export function serveWatch(ctx: ServerContext, target: Target, q: URLSearchParams, res: ServerResponse, sink: Sink, view: MetaVersion | undefined): void {
  const { storage, hub, faults } = ctx;
  const type = target.type;
  const filter = filterFor(target, q);
  const rvText = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
  const sieText = q.get('sendInitialEvents');
  const timeoutText = q.get('timeoutSeconds') ?? '';
  const timeout = timeoutText === '' ? 0 : Number(timeoutText);
  if (!Number.isSafeInteger(timeout) || timeout < 0) throw badRequest(`timeoutSeconds: invalid value ${JSON.stringify(timeoutText)}`);
  let sendInitial: boolean | undefined;
  // Every field error of the options is reported in one 422, in kube-apiserver's order.
  const causes: FieldCause[] = [];
  const forbidden = (field: string, why: string): void => {
    causes.push({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${why}` });
  };
  if (sieText !== null) {
    if (sieText !== 'true' && sieText !== 'false') throw badRequest(`sendInitialEvents: invalid value ${JSON.stringify(sieText)}`);
    sendInitial = sieText === 'true';
    if (match !== 'NotOlderThan') forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    if (!ctx.watchList) forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
  } else if (match !== '') {
    forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  }
  if (causes.length > 0) throw invalidFields('meta.k8s.io', 'ListOptions', causes);
  if (sendInitial === true && !bookmarks) {
    throw invalid('ListOptions.meta.k8s.io ""', 'allowWatchBookmarks', 'Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true');
  }
  const current = storage.resourceVersion;
  const rv = rvText === '' || rvText === '0' ? undefined : parseRv(rvText);
  if (sendInitial === true && rv !== undefined && rv > current) throw tooLargeResourceVersion(rv, current);

  // HTTP/2 frames the body itself and forbids the header; HTTP/1.1 streams it chunked.
  const overHttp2 = (res as { stream?: unknown }).stream !== undefined;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', ...(overHttp2 ? {} : { 'Transfer-Encoding': 'chunked' }) });
  res.flushHeaders();
  const watcher = new Watcher(hub, type, filter, bookmarks, view, res, sink, rv ?? current);
  if (timeout > 0) watcher.endAfter(timeout, () => storage.resourceVersion);
  const openFault = faults.take('watch', type.id, isWatchOpenFault);
  if (openFault?.type === 'errorEvent') {
    watcher.sendError(injectedError(openFault.status ?? 410, openFault.reason, openFault.message));
    return;
  }
  if (openFault?.type === 'silentWatch') {
    // Registered like any watch, so closeWatches() and stop() reach it, but it never says a word.
    watcher.silence();
    hub.add(watcher);
    return;
  }
  if (sendInitial === true || (sendInitial === undefined && rv === undefined)) {
    // Initial state: ADDED for every matching object, then (watch-list) the end-of-initial-events bookmark.
    const snap = storage.snapshot(type, undefined);
    const [from, to] = keyRange(snap.keys, type, filter.namespace);
    for (let i = from; i < to && !watcher.closed; i++) {
      const o = snap.at(i);
      if (o !== undefined && passes(filter, o)) watcher.pushAdded(o);
    }
    if (sendInitial === true) watcher.bookmark(current, true);
  } else if (rv !== undefined) {
    let replay: HistoryEvent[];
    try {
      replay = storage.eventsSince(type, rv);
    } catch (err) {
      if (err instanceof StatusError) {
        watcher.sendError(err);
        return;
      }
      throw err;
    }
    for (const e of replay) watcher.offer(e);
  }
  if (watcher.closed) return;
  hub.add(watcher);
}
