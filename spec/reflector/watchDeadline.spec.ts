import type { IncomingMessage, ServerResponse } from 'node:http';
import { VirtualTimeScheduler, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WATCH_DEADLINE_GRACE_MS } from '../../src/reflector/watchStream.js';
import { reflect, WatchDeadlineExceededError, type ReflectorEvent, type ReflectorStatus } from '../../src/reflector/index.js';
import { kubeSource } from '../../src/sources/index.js';
import { startHostileServer, type HostileServer } from '../helpers/hostileServer.js';
import { waitFor } from '../helpers/waitFor.js';
import { advance, runReflect, ScriptedLW } from './reflectScripted.js';

// A server that ignores a watch's timeoutSeconds and keeps sending valid events would hold the reflector on that
// watch for ever; the client ends it at the timeout plus a grace (HI-60, HI-61). The reflector's clock is a virtual
// one, moved past the deadline once the watch is seen streaming, so nothing here waits on wall time.

const POD = (rv: number): string => `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"d","resourceVersion":"${rv}"}}`;
const LIST = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[${POD(5)}]}`;

let server: HostileServer | undefined;
let sub: Subscription | undefined;
const streams = new Set<NodeJS.Timeout>();

afterEach(async () => {
  vi.useRealTimers();
  sub?.unsubscribe();
  for (const t of streams) clearInterval(t);
  streams.clear();
  await server?.close();
  server = undefined;
});

/** Writes `line()` to the response every few milliseconds until the client goes away: no end at timeoutSeconds. */
function streamForever(res: ServerResponse, line: () => string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const t = setInterval(() => {
    if (res.destroyed) {
      clearInterval(t);
      streams.delete(t);
    } else res.write(`${line()}\n`);
  }, 5);
  streams.add(t);
}

interface Seen {
  readonly watches: URLSearchParams[];
  readonly statuses: ReflectorStatus[];
  readonly events: ReflectorEvent<unknown>[];
}

function start(
  scheduler: VirtualTimeScheduler,
  initialList: 'paged' | 'stream',
  onWatch: (n: number, req: IncomingMessage, res: ServerResponse) => void,
): Seen {
  const seen: Seen = { watches: [], statuses: [], events: [] };
  const source = kubeSource((server as HostileServer).kubeConfig(), 'v1/pods', { watchList: initialList === 'stream' });
  server?.handle((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    if (q.get('watch') !== 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(LIST);
      return;
    }
    seen.watches.push(q);
    onWatch(seen.watches.length, req, res);
  });
  sub = reflect(source, {
    scheduler,
    initialList,
    minWatchTimeoutSeconds: 1,
    random: () => 0,
    status: (s) => seen.statuses.push(s),
  }).subscribe((e) => seen.events.push(e));
  return seen;
}

describe('a watch the server keeps open past its timeoutSeconds', () => {
  it('is ended by the client at the timeout plus the grace, reported, and re-watched at once from the last resourceVersion', async () => {
    server = await startHostileServer(() => undefined);
    const scheduler = new VirtualTimeScheduler();
    const seen = start(scheduler, 'paged', (n, _req, res) => {
      if (n === 1) {
        // The same object at the same resourceVersion, over and over: valid, and never the end.
        streamForever(res, () => `{"type":"MODIFIED","object":${POD(7)}}`);
        return;
      }
      // Recovered: the change the first watch never got to, then an open, quiet watch.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"type":"MODIFIED","object":${POD(9)}}\n`);
    });
    await waitFor(() => seen.events.filter((e) => e.type === 'Modified').length >= 3, 'the endless watch streaming');
    expect(seen.watches[0]?.get('timeoutSeconds')).toBe('1');
    // Only the watch's deadline is pending on the reflector's clock; running it ends the watch.
    scheduler.flush();
    await waitFor(() => seen.watches.length >= 2, 'the re-watch reaching the server', 10_000, {
      describe: () => JSON.stringify(seen.statuses.map((s) => s.state)),
    });
    expect(seen.watches[1]?.get('resourceVersion')).toBe('7');
    await waitFor(() => seen.events.some((e) => e.type === 'Modified' && e.resourceVersion === '9'), 'the cache catching up');

    const errors = seen.statuses.filter((s): s is Extract<ReflectorStatus, { state: 'error' }> => s.state === 'error');
    expect(errors).toHaveLength(1);
    const error = errors[0]?.error;
    expect(error).toBeInstanceOf(WatchDeadlineExceededError);
    expect(error).toMatchObject({ timeoutSeconds: 1, elapsedMs: 1000 + WATCH_DEADLINE_GRACE_MS });
    expect(errors[0]?.terminal).toBe(false);
    // A routine end: no wait, no relist, nothing counted against the server.
    expect(seen.statuses.some((s) => s.state === 'backoff' || s.state === 'relisting')).toBe(false);
    const counters = seen.statuses.at(-1)?.counters;
    expect(counters?.lists).toBe(1);
    expect(counters?.retriesByKind.server).toBe(0);
  });

  it('bounds a streaming list whose initial events never reach their end bookmark', async () => {
    server = await startHostileServer(() => undefined);
    const scheduler = new VirtualTimeScheduler();
    let written = 0;
    const seen = start(scheduler, 'stream', (n, _req, res) => {
      if (n === 1) {
        // The same object again and again, and never the bookmark that ends the initial events.
        streamForever(res, () => {
          written += 1;
          return `{"type":"ADDED","object":${POD(5)}}`;
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"type":"ADDED","object":${POD(8)}}\n`);
      res.write(
        '{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"8","annotations":{"k8s.io/initial-events-end":"true"}}}}\n',
      );
    });
    await waitFor(() => written >= 3, 'the endless initial events streaming');
    expect(seen.watches[0]?.get('sendInitialEvents')).toBe('true');
    expect(seen.watches[0]?.get('timeoutSeconds')).toBe('1');
    scheduler.flush();
    await waitFor(() => seen.watches.length >= 2, 'the streaming list made again', 10_000, {
      describe: () => JSON.stringify(seen.statuses.map((s) => s.state)),
    });
    // A first retry waits a jitter, here zero (random is 0), so no timer stands between the two attempts.
    await waitFor(() => seen.events.find((e) => e.type === 'Replace'), 'the initial state from the second attempt');
    expect(seen.events.filter((e) => e.type === 'Replace')).toEqual([{ type: 'Replace', items: [expect.objectContaining({ metadata: expect.objectContaining({ resourceVersion: '8' }) })], resourceVersion: '8' }]);
    const error = seen.statuses.find((s) => s.state === 'error');
    expect(error).toMatchObject({ error: expect.any(WatchDeadlineExceededError), terminal: false });
    expect(seen.statuses.find((s) => s.state === 'backoff')).toMatchObject({ kind: 'initial-events-incomplete' });
  });
});

describe('a watch deadline longer than a timer can wait', () => {
  it('is waited out in full, not ended when the clamped timer fires (HI-56)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    // A scripted watch that never ends by itself, asked to end after about 35 days: past 2³¹−1 ms.
    const lw = new ScriptedLW();
    const r = runReflect(lw, { minWatchTimeoutSeconds: 3_000_000, stallDetection: false });
    sub = r.sub;
    await advance();
    expect(lw.watches).toHaveLength(1);
    const due = 3_000_000_000 + WATCH_DEADLINE_GRACE_MS;
    await advance(2 ** 31);
    expect(lw.watches).toHaveLength(1);
    expect(r.of('error')).toHaveLength(0);
    await advance(due - 2 ** 31 - 1);
    expect(lw.watches).toHaveLength(1);
    await advance(1);
    expect(lw.watches).toHaveLength(2);
    expect(r.of('error').map((s) => s.error)).toEqual([expect.any(WatchDeadlineExceededError)]);
    expect(r.of('error')[0]?.error).toMatchObject({ timeoutSeconds: 3_000_000, elapsedMs: due });
  });
});
