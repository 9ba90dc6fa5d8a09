import { getEventListeners } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import { count, toArray } from 'ix/asynciterable';
import { map, take } from 'ix/asynciterable/operators';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  DecodeError,
  isExpired,
  isNotFound,
  isServerError,
  isTooManyRequests,
  isUnauthorized,
  KubeApiError,
} from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { isTooLargeResourceVersion } from '../../src/sources/httpErrors.js';
import { listAll, listPages } from '../../src/sources/pager.js';
import type { WatchEvent } from '../../src/sources/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { nodeName?: string };
}

const PODS = { version: 'v1', plural: 'pods' } as const;

function pod(name: string, ns = 'default', labels: Record<string, string> = {}, nodeName = 'n1'): Pod {
  return { metadata: { name, namespace: ns, labels }, spec: { nodeName } };
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Collects watch events until `until` says stop, then ends the watch by breaking out of the loop. */
async function collect<T>(it: AsyncIterable<WatchEvent<T>>, until: (events: WatchEvent<T>[]) => boolean): Promise<WatchEvent<T>[]> {
  const events: WatchEvent<T>[] = [];
  for await (const ev of it) {
    events.push(ev);
    if (until(events)) break;
  }
  return events;
}

/** A kubeconfig for the simulator's URL with a chosen token, built without the simulator's helper. */
function kubeConfigFor(url: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sim', server: url, skipTLSVerify: false }],
    users: [{ name: 'u', ...(token === undefined ? {} : { token }) }],
    contexts: [{ name: 'sim', cluster: 'sim', user: 'u' }],
    currentContext: 'sim',
  });
  return kc;
}

describe('kubeSource against the simulator', () => {
  let server: ApiServer;
  const ac = new AbortController();

  beforeEach(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 60_000 });
  });

  afterEach(async () => {
    await server.close();
  });

  describe('list', () => {
    it('pages with limit and continue, one page ahead, and listAll keeps the first page resourceVersion', async () => {
      for (let i = 0; i < 7; i++) await server.create(PODS, pod(`p${i}`));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { pageSize: 3 });
      const pages: string[][] = [];
      const requestsBefore = server.stats.requests;
      for await (const page of listPages(lw, {}, ac.signal, { pageSize: 3 })) {
        pages.push(page.items.map((p) => p.metadata.name));
        // One request per page consumed so far, and one for the next page while there is one (P-1).
        const expected = Math.min(pages.length + 1, 3);
        await waitFor(() => server.stats.requests - requestsBefore >= expected, `request ${expected}`);
        expect(server.stats.requests - requestsBefore).toBe(expected);
      }
      expect(pages).toEqual([['p0', 'p1', 'p2'], ['p3', 'p4', 'p5'], ['p6']]);
      const all = await listAll(lw, {}, ac.signal, { pageSize: 3 });
      expect(all.items.map((p) => p.metadata.name)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
      expect(all.resourceVersion).toBe(server.resourceVersion());
      expect(all.paginated).toBe(true);
      // Each list closes its connection when it ends: nothing stays pooled, no listener stays on the signal.
      await waitFor(() => server.stats.connections === 0, '0 open connections');
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    });

    it('returns one page with the continue token and remainingItemCount', async () => {
      for (let i = 0; i < 5; i++) await server.create(PODS, pod(`p${i}`));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { pageSize: 2 });
      const page = await lw.list({}, ac.signal);
      expect(page.items).toHaveLength(2);
      expect(page.kind).toBe('PodList');
      expect(page.metadata.continue).toBeTruthy();
      expect(page.metadata.remainingItemCount).toBe(3);
      const whole = await lw.list({ limit: 0 }, ac.signal);
      expect(whole.items).toHaveLength(5);
      expect(whole.metadata.continue ?? '').toBe('');
    });

    it('listItems streams one response lazily and composes with ix operators', async () => {
      for (let i = 0; i < 20; i++) await server.create(PODS, pod(`p${i}`));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const stream = lw.listItems({ limit: 0 }, ac.signal);
      const before = server.stats.requests;
      const firstTwo = await toArray(stream.pipe(take(2), map((p) => p.metadata.name)));
      expect(firstTwo).toEqual(['p0', 'p1']);
      expect(server.stats.requests - before).toBe(1);
      await waitFor(() => server.stats.connections === 0, '0 open connections');
      expect(stream.envelope).toBeUndefined();
      expect(await count(stream)).toBe(20);
      expect(stream.envelope?.metadata.resourceVersion).toBe(server.resourceVersion());
    });

    it('applies namespace, label and field selectors', async () => {
      await server.create(PODS, pod('a', 'default', { app: 'web' }, 'n1'));
      await server.create(PODS, pod('b', 'default', { app: 'db' }, 'n2'));
      await server.create(PODS, pod('c', 'other', { app: 'web' }, 'n2'));
      const names = async (opts: Parameters<typeof kubeSource>[2]) =>
        (await kubeSource<Pod>(server.kubeConfig(), PODS, opts).list({}, ac.signal)).items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).sort();
      expect(await names({})).toEqual(['default/a', 'default/b', 'other/c']);
      expect(await names({ namespace: 'other' })).toEqual(['other/c']);
      expect(await names({ labelSelector: 'app=web' })).toEqual(['default/a', 'other/c']);
      expect(await names({ fieldSelector: 'spec.nodeName=n2' })).toEqual(['default/b', 'other/c']);
      expect(await names({ namespace: 'default', labelSelector: 'app=web', fieldSelector: 'metadata.name=a' })).toEqual(['default/a']);
    });

    it('reads grouped, custom and cluster-scoped resources', async () => {
      await server.create('apps/v1/deployments', { metadata: { name: 'd', namespace: 'default' }, spec: { replicas: 1 } });
      server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
      await server.create('example.com/v1/widgets', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns1' } });
      await server.create('v1/nodes', { metadata: { name: 'node-1' } });
      const kc = server.kubeConfig();
      expect((await kubeSource(kc, 'apps/v1/deployments', { namespace: 'default' }).list({}, ac.signal)).items.map((d) => d.metadata?.name)).toEqual(['d']);
      expect((await kubeSource<Pod>(kc, { group: 'example.com', version: 'v1', plural: 'widgets' }).list({}, ac.signal)).items.map((d) => d.metadata.name)).toEqual(['w']);
      expect((await kubeSource<Pod>(kc, 'example.com/v1/widgets', { namespace: 'ns1' }).list({}, ac.signal)).items).toHaveLength(1);
      expect((await kubeSource<Pod>(kc, { version: 'v1', plural: 'nodes', namespaced: false }).list({}, ac.signal)).items.map((d) => d.metadata.name)).toEqual(['node-1']);
      expect(() => kubeSource(kc, { version: 'v1', plural: 'nodes', namespaced: false }, { namespace: 'x' })).toThrow(TypeError);
    });

    it('restarts from page one when the continue token expired (410)', async () => {
      for (let i = 0; i < 6; i++) await server.create(PODS, pod(`p${i}`));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const pages: { names: string[]; restarted: boolean }[] = [];
      for await (const page of listPages(lw, {}, ac.signal, { pageSize: 2 })) {
        pages.push({ names: page.items.map((p) => p.metadata.name), restarted: page.restarted });
        if (pages.length === 1) {
          await server.create(PODS, pod('late'));
          server.compact();
          // The simulator refuses consistent reads at the compacted resourceVersion itself; one more write moves past it.
          await server.create(PODS, pod('later'));
        }
      }
      expect(pages[0]).toEqual({ names: ['p0', 'p1'], restarted: false });
      expect(pages.map((p) => p.restarted)).toEqual([false, true, false, false, false]);
      const restartedNames = pages.slice(1).flatMap((p) => p.names);
      expect(restartedNames.sort()).toEqual(['late', 'later', 'p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
    });

    it('recognises "too large resource version" (reflect() then lists consistently)', async () => {
      await server.create(PODS, pod('a'));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const err = await caught(lw.list({ resourceVersion: '999999', resourceVersionMatch: 'NotOlderThan', limit: 0 }, ac.signal));
      expect(err).toBeInstanceOf(KubeApiError);
      expect(isTooLargeResourceVersion(err)).toBe(true);
      const consistent = await lw.list({ limit: 0 }, ac.signal);
      expect(consistent.items.map((p) => p.metadata.name)).toEqual(['a']);
    });

    it('maps an expired continue token on a single list call to an expired KubeApiError', async () => {
      for (let i = 0; i < 4; i++) await server.create(PODS, pod(`p${i}`));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { pageSize: 2 });
      const first = await lw.list({}, ac.signal);
      await server.create(PODS, pod('late'));
      server.compact();
      const err = await caught(lw.list({ continue: first.metadata.continue }, ac.signal));
      expect(isExpired(err)).toBe(true);
      expect((err as KubeApiError).status).toBe(410);
    });
  });

  describe('HTTP errors', () => {
    it('429 carries Retry-After as retryAfterSeconds', async () => {
      server.faults.inject({ type: 'status', status: 429, retryAfterSeconds: 7 }, { verb: 'list', resource: 'v1/pods' });
      const err = await caught(kubeSource<Pod>(server.kubeConfig(), PODS).list({}, ac.signal));
      expect(isTooManyRequests(err)).toBe(true);
      expect((err as KubeApiError).retryAfterSeconds).toBe(7);
      expect((err as KubeApiError).status).toBe(429);
    });

    it('500 on list and on watch is a 500 KubeApiError with the server message', async () => {
      server.faults.inject({ type: 'status', status: 500, message: 'etcd is sad' }, { verb: 'list' });
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const err = await caught(lw.list({}, ac.signal));
      expect(isServerError(err)).toBe(true);
      expect((err as KubeApiError).serverMessage).toBe('etcd is sad');
      expect((err as KubeApiError).reason).toBe('InternalError');
      server.faults.inject({ type: 'status', status: 503 }, { verb: 'watch' });
      const werr = await caught(collect(lw.watch({ resourceVersion: server.resourceVersion() }, ac.signal), () => true));
      expect(isServerError(werr)).toBe(true);
      expect((werr as KubeApiError).status).toBe(503);
    });

    it('an unknown resource is a 404 KubeApiError, a bad request a 400 one', async () => {
      const err = await caught(kubeSource(server.kubeConfig(), 'example.com/v1/nothings').list({}, ac.signal));
      expect(isNotFound(err)).toBe(true);
      server.faults.inject({ type: 'status', status: 422, reason: 'Invalid' }, { verb: 'list' });
      const bad = await caught(kubeSource(server.kubeConfig(), PODS).list({}, ac.signal));
      expect(bad).toBeInstanceOf(KubeApiError);
      expect((bad as KubeApiError).status).toBe(422);
      expect((bad as KubeApiError).reason).toBe('Invalid');
    });

    it('a list body cut off by a reset is a ConnectionError, not a DecodeError', async () => {
      for (let i = 0; i < 20; i++) await server.create(PODS, pod(`p${i}`));
      server.faults.inject({ type: 'resetMidLine' }, { verb: 'list' });
      const err = await caught(kubeSource<Pod>(server.kubeConfig(), PODS).list({}, ac.signal));
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toBe('ECONNRESET');
    });

    it('a stopped server is a ConnectionError ECONNREFUSED', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      server.stop();
      const err = await caught(lw.list({}, ac.signal));
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toBe('ECONNREFUSED');
      await server.restart();
      expect((await lw.list({}, ac.signal)).items).toEqual([]);
    });

    it('rejects bad options with a TypeError naming them', () => {
      const kc = server.kubeConfig();
      expect(() => kubeSource(kc, PODS, { pageSize: -1 })).toThrow(/pageSize/);
      expect(() => kubeSource(kc, PODS, { idleTimeoutMs: 0 })).toThrow(/idleTimeoutMs/);
      expect(() => kubeSource(kc, PODS, { labelSelector: 3 as unknown as string })).toThrow(/labelSelector/);
      // @ts-expect-error not a resource name
      expect(() => kubeSource(kc, 'pods')).toThrow(TypeError);
      expect(() => kubeSource(kc, PODS).watch({ timeoutSeconds: 1.5 }, ac.signal)).toThrow(/timeoutSeconds/);
      expect(() => kubeSource(new KubeConfig(), PODS)).toThrow(/cluster/);
    });
  });

  describe('watch', () => {
    it('yields ADDED, MODIFIED, DELETED and BOOKMARK events with selectors applied', async () => {
      await server.close();
      server = await startApiServer({ bookmarkIntervalMs: 50 });
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { labelSelector: 'app=web' });
      const rv = server.resourceVersion();
      const events = lw.watch({ resourceVersion: rv, timeoutSeconds: 60 }, ac.signal);
      const done = collect(events, (evs) => evs.some((e) => e.type === 'DELETED') && evs.at(-1)?.type === 'BOOKMARK');
      await waitFor(() => server.stats.watchesOpen === 1, '1 open watches');
      await server.create(PODS, pod('a', 'default', { app: 'web' }));
      await server.create(PODS, pod('ignored', 'default', { app: 'db' }));
      await server.patch(PODS, 'default', 'a', { metadata: { annotations: { x: 'y' } } });
      await server.delete(PODS, 'default', 'a');
      // Bookmarks are sent only once the resourceVersion moved past what the watch has seen.
      await server.create('v1/configmaps', { metadata: { name: 'moved', namespace: 'default' } });
      const seen = await done;
      const changes = seen.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata?.name}`);
      expect(changes).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
      const bookmark = seen.at(-1);
      expect(bookmark?.type).toBe('BOOKMARK');
      expect(Number(bookmark?.object.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(rv));
      await waitFor(() => server.stats.watchesOpen === 0, '0 open watches');
    });

    it('sends watch=true, bookmarks and the timeout; the server ends the watch at its timeout', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const events = await collect(lw.watch({ resourceVersion: server.resourceVersion(), timeoutSeconds: 1 }, ac.signal), () => false);
      expect(events.filter((e) => e.type !== 'BOOKMARK')).toEqual([]);
    });

    it('streams the initial state ending with the initial-events-end bookmark (sendInitialEvents)', async () => {
      await server.create(PODS, pod('a'));
      await server.create(PODS, pod('b'));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      expect(lw.supportsWatchList).toBe(true);
      expect(kubeSource(server.kubeConfig(), PODS, { watchList: false }).supportsWatchList).toBe(false);
      const events = await collect(
        lw.watch({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true }, ac.signal),
        (evs) => evs.some((e) => e.type === 'BOOKMARK' && e.object.metadata?.annotations?.['k8s.io/initial-events-end'] === 'true'),
      );
      const added = events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata?.name);
      expect(added.sort()).toEqual(['a', 'b']);
      const end = events.at(-1);
      expect(end?.type).toBe('BOOKMARK');
      expect(end?.object.metadata?.resourceVersion).toBe(server.resourceVersion());
    });

    it('a server that rejects sendInitialEvents answers with a KubeApiError the caller can fall back on', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      // sendInitialEvents without resourceVersionMatch=NotOlderThan is invalid, as on kube-apiserver.
      const err = await caught(collect(lw.watch({ sendInitialEvents: true }, ac.signal), () => true));
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).status).toBe(422);
      expect((err as KubeApiError).reason).toBe('Invalid');
    });

    it('an ERROR event with a 410 Status (watch from a compacted resourceVersion) throws an expired KubeApiError', async () => {
      await server.create(PODS, pod('a'));
      const old = '1';
      await server.create(PODS, pod('b'));
      server.compact();
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const err = await caught(collect(lw.watch({ resourceVersion: old }, ac.signal), () => false));
      expect(isExpired(err)).toBe(true);
      expect((err as KubeApiError).status).toBe(410);
      expect((err as KubeApiError).reason).toBe('Expired');
    });

    it('an injected ERROR event mid-stream throws the typed error after the events before it', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const seen: string[] = [];
      const it = lw.watch({ resourceVersion: server.resourceVersion() }, ac.signal);
      const run = (async () => {
        for await (const ev of it) {
          seen.push(`${ev.type} ${ev.object.metadata?.name}`);
          if (seen.length === 1) {
            server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch' });
            await server.create(PODS, pod('b'));
          }
        }
      })();
      await waitFor(() => server.stats.watchesOpen === 1, '1 open watches');
      await server.create(PODS, pod('a'));
      const err = await caught(run);
      expect(seen[0]).toBe('ADDED a');
      expect(isExpired(err)).toBe(true);
    });

    it('a malformed line throws DecodeError with the line and its byte position', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const seen: WatchEvent<Pod>[] = [];
      const run = (async () => {
        for await (const ev of lw.watch({ resourceVersion: server.resourceVersion() }, ac.signal)) {
          seen.push(ev);
          if (seen.length === 1) {
            server.faults.inject({ type: 'malformedLine', line: '{"type":"ADDED","object":{"kind":' }, { verb: 'watch' });
            await server.create(PODS, pod('b'));
            // Ending the response flushes whatever the simulator has queued, so the test does not depend on its write batching.
            server.faults.closeWatches();
          }
        }
      })();
      await waitFor(() => server.stats.watchesOpen === 1, '1 open watches');
      await server.create(PODS, pod('a'));
      const err = await caught(run);
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as DecodeError).line).toBe('{"type":"ADDED","object":{"kind":');
      const firstLineBytes = Buffer.byteLength(`${JSON.stringify({ type: 'ADDED', object: seen[0]?.object })}\n`);
      expect((err as DecodeError).position).toBe(firstLineBytes);
      await waitFor(() => server.stats.watchesOpen === 0, '0 open watches');
    });

    it('a connection reset mid-line is a ConnectionError, not a DecodeError', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const run = collect(lw.watch({ resourceVersion: server.resourceVersion() }, ac.signal), () => false);
      await waitFor(() => server.stats.watchesOpen === 1, '1 open watches');
      server.faults.inject({ type: 'resetMidLine' }, { verb: 'watch' });
      await server.create(PODS, pod('a'));
      const err = await caught(run);
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toBe('ECONNRESET');
    });
  });

  describe('idle timeout', () => {
    it('a request the server never answers ends with IDLE_TIMEOUT', async () => {
      server.faults.inject({ type: 'stall' }, { verb: 'watch' });
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { idleTimeoutMs: 200 });
      const err = await caught(collect(lw.watch({ resourceVersion: server.resourceVersion() }, ac.signal), () => false));
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toBe('IDLE_TIMEOUT');
      await waitFor(() => server.stats.connections === 0, '0 open connections');
    });

    it('a watch that goes silent ends with IDLE_TIMEOUT after its events', async () => {
      // Generous enough that a loaded machine still delivers the first event before the timer fires.
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { idleTimeoutMs: 1000 });
      await server.create(PODS, pod('a'));
      const seen: string[] = [];
      const err = await caught(
        (async () => {
          for await (const ev of lw.watch({ resourceVersion: '1' }, ac.signal)) seen.push(ev.object.metadata?.name ?? '');
        })(),
      );
      expect(seen).toEqual(['a']);
      expect((err as ConnectionError).code).toBe('IDLE_TIMEOUT');
    });

    it('a list the server never answers ends with IDLE_TIMEOUT', async () => {
      server.faults.inject({ type: 'stall' }, { verb: 'list' });
      const err = await caught(kubeSource<Pod>(server.kubeConfig(), PODS, { idleTimeoutMs: 200 }).list({}, ac.signal));
      expect((err as ConnectionError).code).toBe('IDLE_TIMEOUT');
      await waitFor(() => server.stats.connections === 0, '0 open connections');
    });

    it('a slow consumer does not trip the idle timer', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS, { idleTimeoutMs: 300 });
      await server.create(PODS, pod('a'));
      await server.create(PODS, pod('b'));
      const it = lw.watch({ resourceVersion: '1' }, ac.signal)[Symbol.asyncIterator]();
      expect((await it.next()).value?.object.metadata?.name).toBe('a');
      // Hold the stream well past the idle timeout without pulling: waiting on a condition that needs real time.
      const heldSince = performance.now();
      await waitFor(() => performance.now() - heldSince > 900, 'three idle timeouts to pass', 3000, { everyMs: 50 });
      expect((await it.next()).value?.object.metadata?.name).toBe('b');
      await it.return?.();
    });
  });

  describe('abort', () => {
    it('before the request: nothing is sent', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const aborted = AbortSignal.abort();
      const before = server.stats.requests;
      await expect(lw.list({}, aborted)).rejects.toMatchObject({ name: 'AbortError' });
      await expect(collect(lw.watch({}, aborted), () => false)).rejects.toMatchObject({ name: 'AbortError' });
      expect(server.stats.requests).toBe(before);
    });

    it('mid-list ends the request at once and leaves no open socket', async () => {
      for (let i = 0; i < 50; i++) await server.create(PODS, pod(`p${i}`));
      server.faults.inject({ type: 'trickle', bytesPerChunk: 64, intervalMs: 20 }, { verb: 'list' });
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const abort = new AbortController();
      const stream = lw.listItems({}, abort.signal);
      const err = await caught(
        (async () => {
          for await (const item of stream) {
            expect(item.metadata.name).toBe('p0');
            expect(server.stats.connections).toBe(1);
            abort.abort();
          }
        })(),
      );
      expect(err).toMatchObject({ name: 'AbortError' });
      await waitFor(() => server.stats.connections === 0, '0 open connections');
    });

    it('mid-watch ends the request at once, even while the consumer is not pulling', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const abort = new AbortController();
      const it = lw.watch({ resourceVersion: server.resourceVersion() }, abort.signal)[Symbol.asyncIterator]();
      const first = it.next();
      await waitFor(() => server.stats.watchesOpen === 1, '1 open watches');
      await server.create(PODS, pod('a'));
      expect((await first).value?.object.metadata?.name).toBe('a');
      abort.abort();
      await waitFor(() => server.stats.connections === 0, '0 open connections');
      expect(server.stats.watchesOpen).toBe(0);
      await expect(it.next()).rejects.toMatchObject({ name: 'AbortError' });
    });

    it('while connecting to a stalled server', async () => {
      server.faults.inject({ type: 'stall' }, { verb: 'list' });
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      const abort = new AbortController();
      const pending = lw.list({}, abort.signal);
      await waitFor(() => server.stats.connections === 1, '1 open connections');
      abort.abort();
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
      await waitFor(() => server.stats.connections === 0, '0 open connections');
    });

    it('breaking out of a watch loop closes the connection and clears its timer and listener', async () => {
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      await server.create(PODS, pod('a'));
      const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      await collect(lw.watch({ resourceVersion: '1' }, ac.signal), () => true);
      await waitFor(() => server.stats.connections === 0, '0 open connections');
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
      expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(timersBefore);
    });
  });
});

describe('kubeSource authentication and TLS', () => {
  it('sends the bearer token; a wrong one is a 401 KubeApiError that does not leak it', async () => {
    const server = await startApiServer({ token: 'right-token' });
    try {
      await server.create(PODS, pod('a'));
      expect((await kubeSource<Pod>(server.kubeConfig(), PODS).list({}, new AbortController().signal)).items).toHaveLength(1);
      const err = await caught(kubeSource<Pod>(kubeConfigFor(server.url, 'wrong-token'), PODS).list({}, new AbortController().signal));
      expect(isUnauthorized(err)).toBe(true);
      expect((err as KubeApiError).status).toBe(401);
      const text = `${String(err)} ${JSON.stringify(err)} ${(err as Error).stack ?? ''}`;
      expect(text).not.toContain('wrong-token');
      expect(isUnauthorized(await caught(kubeSource<Pod>(kubeConfigFor(server.url), PODS).list({}, new AbortController().signal)))).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('takes the token from an exec credential plugin', async () => {
    const server = await startApiServer({ token: 'exec-token' });
    try {
      await server.create(PODS, pod('a'));
      const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'exec-token' } };
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'sim', server: server.url, skipTLSVerify: false }],
        users: [
          {
            name: 'u',
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: process.execPath,
              args: ['-e', `process.stdout.write(${JSON.stringify(JSON.stringify(credential))})`],
              interactiveMode: 'Never',
            },
          },
        ],
        contexts: [{ name: 'sim', cluster: 'sim', user: 'u' }],
        currentContext: 'sim',
      });
      expect((await kubeSource<Pod>(kc, PODS).list({}, new AbortController().signal)).items).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('verifies the server with the kubeconfig CA, and fails without it', async () => {
    const server = await startApiServer({ tls: true, token: 't' });
    try {
      expect(server.url.startsWith('https://')).toBe(true);
      await server.create(PODS, pod('a'));
      const lw = kubeSource<Pod>(server.kubeConfig(), PODS);
      expect((await lw.list({}, new AbortController().signal)).items.map((p) => p.metadata.name)).toEqual(['a']);
      const events = await collect(lw.watch({ resourceVersion: '1' }, new AbortController().signal), () => true);
      expect(events[0]?.type).toBe('ADDED');
      const err = await caught(kubeSource<Pod>(kubeConfigFor(server.url, 't'), PODS).list({}, new AbortController().signal));
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as ConnectionError).code).toMatch(/CERT|SIGNATURE|ISSUER|SELF_SIGNED/);
      await waitFor(() => server.stats.connections === 0, '0 open connections');
    } finally {
      await server.close();
    }
  });
});
