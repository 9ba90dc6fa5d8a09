import { Watch } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { names, request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
const open: WireWatch[] = [];

beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await server.close();
});

async function watch(path: string): Promise<WireWatch> {
  const w = await WireWatch.open(`${server.url}${path}`);
  open.push(w);
  return w;
}

const pod = (name: string, labels: Record<string, string> = {}, namespace = 'default') => ({ metadata: { name, namespace, labels } });

describe('WATCH', () => {
  it('streams one JSON line per event from a resourceVersion, chunked', async () => {
    await server.create('v1/pods', pod('before'));
    const rv = server.resourceVersion();
    await server.create('v1/pods', pod('a'));
    const w = await watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    expect(w.headers['transfer-encoding']).toBe('chunked');
    expect(w.headers['content-type']).toBe('application/json');
    await server.patch('v1/pods', 'default', 'a', { metadata: { labels: { x: 'y' } } });
    const deleted = await server.delete<any>('v1/pods', 'default', 'a');
    await w.waitForLines(3);
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(names(w.events)).toEqual(['a', 'a', 'a']);
    const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
    expect(w.events[2]?.object.metadata.resourceVersion).toBe(deleted.metadata.resourceVersion);
    expect(w.raw.split('\n').filter((l) => l !== '')).toHaveLength(3);
  });

  it('without a resourceVersion sends the current objects as ADDED, then live events', async () => {
    await server.create('v1/pods', pod('a'));
    await server.create('v1/pods', pod('b'));
    const w = await watch('/api/v1/pods?watch=1');
    await w.waitForLines(2);
    await server.create('v1/pods', pod('c'));
    await w.waitForLines(3);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED a', 'ADDED b', 'ADDED c']);
  });

  it('answers a watch from a compacted resourceVersion with HTTP 200 and an ERROR 410 Expired event', async () => {
    await server.create('v1/pods', pod('a'));
    const old = server.resourceVersion();
    await server.create('v1/pods', pod('b'));
    server.compact();
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${Number(old) - 1}`);
    expect(w.status).toBe(200);
    await w.waitForLines(1);
    expect(await w.waitForEnd()).toBe('end');
    expect(w.lines).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 }) },
    ]);
    // Watching from the compaction point itself needs no dropped event.
    const ok = await watch(`/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`);
    await server.create('v1/pods', pod('c'));
    await ok.waitForLines(1);
    expect(ok.events[0]?.type).toBe('ADDED');
  });

  it('expires watches that fell out of the history window (count and age)', async () => {
    await server.close();
    server = await startApiServer({ history: { maxEvents: 2 } });
    const start = server.resourceVersion();
    for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${start}`);
    await w.waitForLines(1);
    expect(w.events[0]?.type).toBe('ERROR');
    await server.close();
    server = await startApiServer({ history: { maxAgeMs: 20 } });
    const start2 = server.resourceVersion();
    await server.create('v1/pods', pod('a'));
    await waitFor(() => server.stats.historyEvents === 0, 'the event to age out', 2_000);
    const w2 = await watch(`/api/v1/pods?watch=true&resourceVersion=${start2}`);
    await w2.waitForLines(1);
    expect(w2.events[0]?.object.code).toBe(410);
  });

  it('from a future resourceVersion, skips the events up to it', async () => {
    const future = Number(server.resourceVersion()) + 2;
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${future}`);
    for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
    await w.waitForLines(1);
    expect(names(w.events)).toEqual(['c']);
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}&timeoutSeconds=1`);
    expect(await w.waitForEnd(5_000)).toBe('end');
    expect(w.lines).toEqual([]);
    expect(server.stats.watchesOpen).toBe(0);
  });

  it('sends a BOOKMARK shortly before the timeoutSeconds deadline when the resourceVersion moved', async () => {
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}&timeoutSeconds=3&allowWatchBookmarks=true`);
    await server.create('v1/configmaps', { metadata: { name: 'elsewhere', namespace: 'default' } });
    await w.waitForLines(1);
    // It arrives while the watch is still open (2 s before its deadline), not with the end.
    expect(w.ending).toBeUndefined();
    expect(await w.waitForEnd(5_000)).toBe('end');
    expect(w.lines).toEqual([{ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion() } } }]);
  });

  it('sends no BOOKMARK before the deadline when nothing moved since the watcher was last sent something', async () => {
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}&timeoutSeconds=1&allowWatchBookmarks=true`);
    expect(await w.waitForEnd(5_000)).toBe('end');
    expect(w.lines).toEqual([]);
  });

  it('sends periodic BOOKMARKs only to watchers that allow them, and only when the resourceVersion moved past what each was sent', async () => {
    await server.close();
    server = await startApiServer({ bookmarkIntervalMs: 30 });
    await server.create('v1/pods', pod('a'));
    const before = server.resourceVersion();
    await server.create('v1/configmaps', { metadata: { name: 'c1', namespace: 'default' } });
    const rv = server.resourceVersion();
    const behind = await watch(`/api/v1/pods?watch=true&resourceVersion=${before}&allowWatchBookmarks=true`);
    const current = await watch(`/api/v1/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const without = await watch(`/api/v1/pods?watch=true&resourceVersion=${before}`);
    // A write to another resource moved the global resourceVersion past what `behind` started from.
    await behind.waitForLines(1);
    expect(behind.lines[0]).toEqual({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv } } });
    // That tick offered `current` the same bookmark; it was not newer, so the next pod event is its first line.
    await server.create('v1/pods', pod('b'));
    await current.waitForLines(1);
    expect(current.lines.map((l: any) => l.type)).toEqual(['ADDED']);
    await server.create('v1/configmaps', { metadata: { name: 'c2', namespace: 'default' } });
    await current.waitForLines(2);
    expect(current.lines[1]).toEqual({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion() } } });
    await without.waitForLines(1);
    expect(without.lines.map((l: any) => l.type)).toEqual(['ADDED']);
  });

  it('turns an object leaving the selector into DELETED and entering it into ADDED', async () => {
    await server.create('v1/pods', pod('a', { app: 'web' }));
    const w = await watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${server.resourceVersion()}&labelSelector=app%3Dweb`);
    await server.create('v1/pods', pod('other', { app: 'db' }));
    const left = await server.patch<any>('v1/pods', 'default', 'a', { metadata: { labels: { app: 'db' } } });
    await server.patch('v1/pods', 'default', 'a', { metadata: { annotations: { while: 'outside' } } });
    const entered = await server.patch<any>('v1/pods', 'default', 'a', { metadata: { labels: { app: 'web' } } });
    await server.patch('v1/pods', 'default', 'a', { metadata: { annotations: { while: 'inside' } } });
    await server.delete('v1/pods', 'default', 'a');
    await w.waitForLines(4);
    expect(w.events.map((e) => e.type)).toEqual(['DELETED', 'ADDED', 'MODIFIED', 'DELETED']);
    // The DELETED for leaving carries the last matching content at the event's resourceVersion.
    expect(w.events[0]?.object.metadata.labels).toEqual({ app: 'web' });
    expect(w.events[0]?.object.metadata.resourceVersion).toBe(left.metadata.resourceVersion);
    expect(w.events[1]?.object.metadata.resourceVersion).toBe(entered.metadata.resourceVersion);
    expect(names(w.events)).toEqual(['a', 'a', 'a', 'a']);
  });

  it('applies field selectors and namespaces to watches', async () => {
    const w = await watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${server.resourceVersion()}&fieldSelector=status.phase%3DRunning`);
    await server.create('v1/pods', pod('elsewhere', {}, 'other'));
    await server.create('v1/pods', pod('p'));
    await server.patch('v1/pods', 'other', 'elsewhere', { status: { phase: 'Running' } });
    await server.patch('v1/pods', 'default', 'p', { status: { phase: 'Running' } });
    await server.patch('v1/pods', 'default', 'p', { status: { phase: 'Succeeded' } });
    await w.waitForLines(2);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.status.phase}`)).toEqual(['ADDED p Running', 'DELETED p Running']);
  });

  it('replays history through the selector too', async () => {
    await server.create('v1/pods', pod('a', { app: 'web' }));
    const rv = server.resourceVersion();
    await server.patch('v1/pods', 'default', 'a', { metadata: { labels: { app: 'db' } } });
    const w = await watch(`/api/v1/pods?watch=true&resourceVersion=${rv}&labelSelector=app%3Dweb`);
    await w.waitForLines(1);
    expect(w.events[0]?.type).toBe('DELETED');
  });

  it('works with client-node Watch', async () => {
    const seen: string[] = [];
    const watcher = new Watch(server.kubeConfig());
    const req = await watcher.watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: server.resourceVersion() },
      (type, obj) => seen.push(`${type} ${obj.metadata.name}`),
      () => undefined,
    );
    await server.create('v1/pods', pod('a'));
    await waitFor(() => seen.length === 1, 'one event', 5_000);
    req.abort();
    expect(seen).toEqual(['ADDED a']);
  });
});

describe('sendInitialEvents', () => {
  const base = '/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';

  it('sends ADDED for the current state, then the initial-events-end BOOKMARK, then live events', async () => {
    await server.create('v1/pods', pod('a'));
    await server.create('v1/pods', pod('b'));
    const rv = server.resourceVersion();
    const w = await watch(`${base}&resourceVersion=`);
    await w.waitForLines(3);
    await server.create('v1/pods', pod('c'));
    await w.waitForLines(4);
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK', 'ADDED']);
    expect(w.events[2]?.object).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
  });

  it('accepts resourceVersion "0" and an older resourceVersion, and filters initial events by selector', async () => {
    await server.create('v1/pods', pod('a', { app: 'web' }));
    const old = server.resourceVersion();
    await server.create('v1/pods', pod('b', { app: 'db' }));
    for (const rv of ['0', old]) {
      const w = await watch(`${base}&resourceVersion=${rv}&labelSelector=app%3Dweb`);
      await w.waitForLines(2);
      expect(w.events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`)).toEqual(['ADDED a', 'BOOKMARK ']);
      expect(w.events[1]?.object.metadata.resourceVersion).toBe(server.resourceVersion());
    }
  });

  it('is refused with 422 Invalid under watchList: false, as a server without the WatchList feature gate', async () => {
    await server.close();
    server = await startApiServer({ watchList: false });
    const message = 'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled';
    for (const sie of ['true', 'false']) {
      const res = await request(`${server.url}/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=${sie}&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
      expect(res.status).toBe(422);
      expect(res.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: ${message}`,
        reason: 'Invalid',
        details: { group: 'meta.k8s.io', kind: 'ListOptions', causes: [{ reason: 'FieldValueForbidden', message, field: 'sendInitialEvents' }] },
        code: 422,
      });
    }
    // Both field errors of one request are reported together, in kube-apiserver's order.
    const both = await request(`${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`);
    expect(both.json.message).toBe(
      `ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, sendInitialEvents: ${message}]`,
    );
    expect(both.json.details.causes.map((c: any) => c.field)).toEqual(['resourceVersionMatch', 'sendInitialEvents']);
    // Plain watches are unaffected.
    const plain = await watch(`/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`);
    expect(plain.status).toBe(200);
    await expect(startApiServer({ watchList: 'no' as never })).rejects.toThrow(/option "watchList" must be a boolean, got "no"/);
  });

  it('is rejected with 422 Invalid without NotOlderThan or without bookmarks, as kube-apiserver does', async () => {
    const noMatch = await request(`${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`);
    expect(noMatch.status).toBe(422);
    expect(noMatch.json).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    const noBookmarks = await request(`${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    expect(noBookmarks.status).toBe(422);
    const matchWithoutSie = await request(`${server.url}/api/v1/pods?watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1`);
    expect(matchWithoutSie.status).toBe(422);
  });
});
