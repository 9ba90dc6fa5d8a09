import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';
import { obj } from '../helpers/objects.js';

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

const podWatch = () => `/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`;

describe('faults', () => {
  it('closeWatches ends every open watch cleanly', async () => {
    const a = await watch(podWatch());
    const b = await watch(`/api/v1/configmaps?watch=true&resourceVersion=${server.resourceVersion()}`);
    await waitFor(() => server.stats.watchesOpen === 2, 'two open watches', 5_000);
    server.faults.closeWatches();
    expect(await a.waitForEnd()).toBe('end');
    expect(await b.waitForEnd()).toBe('end');
    expect(server.stats.watchesOpen).toBe(0);
  });

  it('resetConnections destroys open sockets; the server keeps serving', async () => {
    const w = await watch(podWatch());
    server.faults.resetConnections();
    expect(await w.waitForEnd()).toBe('error');
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });

  it('a 429 status fault carries Retry-After and is used up after `times` requests', async () => {
    server.faults.inject({ type: 'status', status: 429, retryAfterSeconds: 3 }, { verb: 'list', times: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await request(`${server.url}/api/v1/pods`);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('3');
      expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 3 } });
    }
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });

  it('status faults target a verb and a resource', async () => {
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'get', resource: 'v1/pods' });
    await server.create('v1/pods', obj('a'));
    await server.create('v1/configmaps', obj('a'));
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
    expect((await request(`${server.url}/api/v1/namespaces/default/configmaps/a`)).status).toBe(200);
    const hit = await request(`${server.url}/api/v1/namespaces/default/pods/a`);
    expect(hit.status).toBe(500);
    expect(hit.json.reason).toBe('InternalError');
    server.faults.inject({ type: 'status', status: 503 }, { verb: 'watch' });
    const w = await request(`${server.url}${podWatch()}`);
    expect(w.status).toBe(503);
    expect(w.json.reason).toBe('ServiceUnavailable');
    server.faults.inject({ type: 'status', status: 403, message: 'no' }, { verb: '*', times: 5 });
    server.faults.clear();
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });

  it('stall accepts the request and says nothing until the client gives up', async () => {
    server.faults.inject({ type: 'stall' }, { verb: 'list' });
    let answered = false;
    let failure: Error | undefined;
    const url = new URL(`${server.url}/api/v1/pods`);
    const req = http.get({ hostname: url.hostname, port: url.port, path: url.pathname, agent: false }, () => (answered = true));
    req.on('error', (err) => (failure = err));
    await waitFor(() => server.stats.requests === 1, 'the stalled request to arrive', 5_000);
    // The server goes on answering others while the stalled request waits.
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
    expect(answered).toBe(false);
    req.destroy(new Error('client gave up'));
    await waitFor(() => failure !== undefined, 'the request to fail', 5_000);
    expect(answered).toBe(false);
  });

  it('trickle serves the normal response a few bytes at a time', async () => {
    await server.create('v1/pods', obj('a'));
    server.faults.inject({ type: 'trickle', bytesPerChunk: 16, intervalMs: 1 }, { verb: 'list' });
    const url = new URL(`${server.url}/api/v1/pods`);
    const chunks: Buffer[] = await new Promise((resolve, reject) => {
      const got: Buffer[] = [];
      http
        .get({ hostname: url.hostname, port: url.port, path: url.pathname, agent: false }, (res) => {
          res.on('data', (c: Buffer) => got.push(c));
          res.on('end', () => resolve(got));
        })
        .on('error', reject);
    });
    expect(chunks.length).toBeGreaterThan(5);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(16);
    expect(JSON.parse(Buffer.concat(chunks).toString()).items[0].metadata.name).toBe('a');
  });

  it('trickle applies to watch streams too', async () => {
    server.faults.inject({ type: 'trickle', bytesPerChunk: 8, intervalMs: 1 }, { verb: 'watch' });
    const w = await watch(podWatch());
    await server.create('v1/pods', obj('a'));
    await w.waitForLines(1);
    expect(w.events[0]?.object.metadata.name).toBe('a');
  });

  it('resetMidLine writes half of the next event line, then destroys the socket', async () => {
    const w = await watch(podWatch());
    server.faults.inject({ type: 'resetMidLine' }, { verb: 'watch' });
    await server.create('v1/pods', obj('a'));
    expect(await w.waitForEnd()).toBe('error');
    expect(w.raw.length).toBeGreaterThan(0);
    expect(w.raw).not.toContain('\n');
    expect(w.lines).toEqual([]);
  });

  it('resetMidLine armed for list cuts the body in half; armed for any verb it waits for a watch event', async () => {
    await server.create('v1/pods', obj('a'));
    server.faults.inject({ type: 'resetMidLine' }, { verb: 'list' });
    await expect(request(`${server.url}/api/v1/pods`)).rejects.toThrow();
    server.faults.inject({ type: 'resetMidLine' });
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
    const w = await watch(podWatch());
    await server.create('v1/pods', obj('b'));
    expect(await w.waitForEnd()).toBe('error');
  });

  it('refuses watch-only faults armed for other verbs', () => {
    expect(() => server.faults.inject({ type: 'malformedLine' }, { verb: 'list' })).toThrow(TypeError);
    expect(() => server.faults.inject({ type: 'errorEvent' }, { verb: 'get' })).toThrow(/verb must be 'watch'/);
    expect(() => server.faults.inject({ type: 'errorEvent', status: null as never }, { verb: 'watch' })).toThrow(/fault\.status must be an HTTP error code \(400-599\), got null/);
  });

  it('malformedLine writes one garbage line before the next real event', async () => {
    const w = await watch(podWatch());
    server.faults.inject({ type: 'malformedLine', line: 'not json at all' });
    await server.create('v1/pods', obj('a'));
    await server.create('v1/pods', obj('b'));
    await w.waitForLines(3);
    expect(w.lines[0]).toEqual({ malformed: 'not json at all' });
    expect(w.events.map((e) => e.object.metadata.name)).toEqual(['a', 'b']);
  });

  it('stream faults wait for an object event: bookmarks do not take them', async () => {
    await server.close();
    server = await startApiServer({ bookmarkIntervalMs: 20 });
    const w = await watch(`${podWatch()}&allowWatchBookmarks=true`);
    server.faults.inject({ type: 'malformedLine' }, { verb: 'watch' });
    // Bookmarks only go out once the resourceVersion moved; writes elsewhere move it.
    await server.create('v1/configmaps', { metadata: { name: 'c1', namespace: 'default' } });
    await w.waitForLines(1);
    await server.create('v1/configmaps', { metadata: { name: 'c2', namespace: 'default' } });
    await w.waitForLines(2);
    expect(w.lines.every((l) => 'type' in l && l.type === 'BOOKMARK')).toBe(true);
    await server.create('v1/pods', obj('a'));
    await waitFor(() => w.events.some((e) => e.type === 'ADDED'), 'an ADDED event', 5_000);
    const garbage = w.lines.findIndex((l) => 'malformed' in l);
    const added = w.lines.findIndex((l) => 'type' in l && l.type === 'ADDED');
    expect(garbage).toBe(added - 1);
    expect(w.lines[garbage]).toEqual({ malformed: '{"type":"ADDED","object":{"kind":' });
  });

  it('errorEvent sends an ERROR event with a Status and ends the stream', async () => {
    server.faults.inject({ type: 'errorEvent' }, { verb: 'watch' });
    const fresh = await watch(podWatch());
    expect(fresh.status).toBe(200);
    expect(await fresh.waitForEnd()).toBe('end');
    expect(fresh.lines).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
    const running = await watch(podWatch());
    await waitFor(() => server.stats.watchesOpen === 1, 'one open watch', 5_000);
    server.faults.inject({ type: 'errorEvent', status: 500 }, { verb: 'watch' });
    await server.create('v1/pods', obj('a'));
    expect(await running.waitForEnd()).toBe('end');
    expect(running.lines).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 500, reason: 'InternalError' }) }]);
  });

  it('endMidLine writes half of the next event line, then ends the stream cleanly', async () => {
    const w = await watch(podWatch());
    server.faults.inject({ type: 'endMidLine' }, { verb: 'watch' });
    await server.create('v1/pods', obj('a'));
    expect(await w.waitForEnd()).toBe('end');
    expect(w.raw.length).toBeGreaterThan(0);
    expect(w.raw).not.toContain('\n');
    expect(w.lines).toEqual([]);
  });

  it('endMidLine armed for list answers a well-formed but truncated body', async () => {
    await server.create('v1/pods', obj('a'));
    const whole = await request(`${server.url}/api/v1/pods`);
    server.faults.inject({ type: 'endMidLine' }, { verb: 'list' });
    const cut = await request(`${server.url}/api/v1/pods`);
    expect(cut.status).toBe(200);
    expect(cut.json).toBeUndefined();
    expect(cut.text.length).toBeLessThan(whole.text.length);
    expect(whole.text.startsWith(cut.text)).toBe(true);
  });

  it('silentWatch answers 200 and then nothing: no events, no bookmarks, no end at timeoutSeconds', async () => {
    await server.close();
    server = await startApiServer({ bookmarkIntervalMs: 20 });
    server.faults.inject({ type: 'silentWatch' }, { verb: 'watch' });
    const silent = await watch(`${podWatch()}&timeoutSeconds=1&allowWatchBookmarks=true`);
    const control = await watch(`${podWatch()}&timeoutSeconds=1&allowWatchBookmarks=true`);
    expect(silent.status).toBe(200);
    await server.create('v1/pods', obj('a'));
    await control.waitForLines(1);
    expect(await control.waitForEnd()).toBe('end');
    expect(control.events.map((e) => e.type)).toContain('ADDED');
    expect(silent.raw).toBe('');
    expect(silent.ending).toBeUndefined();
    expect(server.stats.watchesOpen).toBe(1);
    server.faults.closeWatches();
    expect(await silent.waitForEnd()).toBe('end');
    expect(silent.raw).toBe('');
  });

  it('silentWatch taken by an open watch silences it from its next event on', async () => {
    const quiet = await watch(podWatch());
    const control = await watch(podWatch());
    await waitFor(() => server.stats.watchesOpen === 2, 'two open watches', 5_000);
    server.faults.inject({ type: 'silentWatch' });
    await server.create('v1/pods', obj('a'));
    await server.create('v1/pods', obj('b'));
    await control.waitForLines(2);
    expect(quiet.lines).toEqual([]);
    expect(quiet.ending).toBeUndefined();
    expect(() => server.faults.inject({ type: 'silentWatch' }, { verb: 'list' })).toThrow(/verb must be 'watch'/);
  });

  it('a 410 can come as the HTTP status of a watch or as its first or a later ERROR event', async () => {
    server.faults.inject({ type: 'status', status: 410 }, { verb: 'watch' });
    const refused = await request(`${server.url}${podWatch()}`);
    expect(refused.status).toBe(410);
    expect(refused.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    server.faults.inject({ type: 'errorEvent' }, { verb: 'watch', times: 2 });
    const atStart = await watch(podWatch());
    expect(await atStart.waitForEnd()).toBe('end');
    expect(atStart.events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) }]);
    const control = await watch(podWatch());
    expect(await control.waitForEnd()).toBe('end');
    server.faults.clear();
    const midStream = await watch(podWatch());
    await server.create('v1/pods', obj('a'));
    await midStream.waitForLines(1);
    server.faults.inject({ type: 'errorEvent' }, { verb: 'watch' });
    await server.create('v1/pods', obj('b'));
    expect(await midStream.waitForEnd()).toBe('end');
    expect(midStream.events.map((e) => e.type)).toEqual(['ADDED', 'ERROR']);
  });

  it('refuses unknown faults and options at compile time and at run time', async () => {
    // @ts-expect-error not a fault type
    expect(() => server.faults.inject({ type: 'bogus' })).toThrow(/unknown fault type "bogus"/);
    // @ts-expect-error silentWatch takes no options
    server.faults.inject({ type: 'silentWatch', status: 410 }, { verb: 'watch' });
    server.faults.clear();
    // @ts-expect-error the option is downMs
    await server.restart({ down: 10 });
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });

  it('pending() counts the faults still armed', () => {
    expect(server.faults.pending()).toBe(0);
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'list', times: 3 });
    server.faults.inject({ type: 'malformedLine' });
    expect(server.faults.pending()).toBe(2);
    server.faults.clear();
    expect(server.faults.pending()).toBe(0);
  });

  it('stop refuses connections and drops watches; restart serves the same storage on the same port', async () => {
    await server.create('v1/pods', obj('a'));
    const port = server.port;
    const w = await watch(podWatch());
    server.stop();
    expect(await w.waitForEnd()).toBe('error');
    await expect(request(`${server.url}/api/v1/pods`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.create('v1/pods', obj('b'));
    await server.restart();
    expect(server.port).toBe(port);
    const list = await request(`${server.url}/api/v1/pods`);
    expect(list.json.items.map((p: any) => p.metadata.name)).toEqual(['a', 'b']);
  });

  it('restarts straight after a stop', async () => {
    const port = server.port;
    server.stop();
    await server.restart();
    expect(server.port).toBe(port);
    expect((await request(`${server.url}/api/v1/pods`)).status).toBe(200);
  });
});
