import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer, type AuditEvent } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';
import { obj } from '../helpers/objects.js';

let server: ApiServer;
const audited: AuditEvent[] = [];
const open: WireWatch[] = [];

beforeEach(async () => {
  audited.length = 0;
  server = await startApiServer({ audit: (e) => audited.push(e) });
});
afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await server.close();
});

async function watch(path: string): Promise<WireWatch> {
  const w = await WireWatch.open(`${server.url}${path}?watch=true&resourceVersion=${server.resourceVersion()}`);
  open.push(w);
  await waitFor(() => server.stats.watchesOpen === open.length, 'the watch to be registered', 5_000);
  return w;
}

const names = (w: WireWatch) => w.events.map((e) => `${e.type} ${e.object.metadata.name as string}`);

describe('faults.delayWatches', () => {
  it('holds the lines of one resource until release, while writes are answered and other watches go on', async () => {
    const cms = await watch('/api/v1/configmaps');
    const pods = await watch('/api/v1/pods');
    const hold = server.faults.delayWatches({ resource: 'v1/configmaps' });
    const created = await request(`${server.url}/api/v1/namespaces/default/configmaps`, { method: 'POST', body: obj('a') });
    expect(created.status).toBe(201);
    await server.create('v1/pods', obj('p'));
    // Lines are flushed together once per turn: when the pod watch has its line, the configmap line was flushed into the hold.
    await pods.waitForLines(1);
    expect(hold.held).toBe(1);
    expect(cms.lines).toEqual([]);
    hold.release();
    await cms.waitForLines(1);
    expect(names(cms)).toEqual(['ADDED a']);
    expect(hold.held).toBe(0);
  });

  it('keeps the order: held lines go out first, then what came after the release', async () => {
    const cms = await watch('/api/v1/configmaps');
    const hold = server.faults.delayWatches();
    await server.create('v1/configmaps', obj('a'));
    await server.update('v1/configmaps', { ...obj('a'), data: { k: 'v' } });
    await waitFor(() => hold.held === 2, 'two held lines', 5_000);
    hold.release();
    await server.create('v1/configmaps', obj('b'));
    await cms.waitForLines(3);
    expect(names(cms)).toEqual(['ADDED a', 'MODIFIED a', 'ADDED b']);
  });

  it('holds each line for delayMs when given one', async () => {
    const cms = await watch('/api/v1/configmaps');
    server.faults.delayWatches({ delayMs: 100 });
    const wroteAt = Date.now();
    await server.create('v1/configmaps', obj('a'));
    await cms.waitForLines(1);
    // Timers may fire a millisecond early by Date's rounding.
    expect(Date.now() - wroteAt).toBeGreaterThanOrEqual(99);
  });

  it('applies to watches opened while it is in force, and a watch that ends while held ends after its lines', async () => {
    const hold = server.faults.delayWatches({ resource: 'v1/configmaps' });
    const cms = await watch('/api/v1/configmaps');
    await server.create('v1/configmaps', obj('a'));
    await waitFor(() => hold.held === 1, 'the held line', 5_000);
    server.faults.closeWatches();
    expect(cms.ending).toBeUndefined();
    server.faults.clear();
    expect(await cms.waitForEnd()).toBe('end');
    expect(names(cms)).toEqual(['ADDED a']);
  });

  it('checks its options', () => {
    expect(() => server.faults.delayWatches({ delayMs: -1 })).toThrow(new TypeError('faults.delayWatches: delayMs must be a number >= 0 or Infinity, got -1'));
    expect(() => server.faults.delayWatches({ resource: '' })).toThrow(/resource must be a resource name/);
    expect(() => server.faults.delayWatches(3 as never)).toThrow(/options must be an object/);
  });
});

describe('the audit option', () => {
  it('tells each answered object request with its code, reason and resourceVersion, in the turn it was answered', async () => {
    let atConflict: string | undefined;
    await server.close();
    audited.length = 0;
    server = await startApiServer({
      audit: (e) => {
        audited.push(e);
        if (e.code === 409) atConflict = server.get<{ metadata: { resourceVersion: string } }>('v1/configmaps', 'default', 'a')?.metadata.resourceVersion;
      },
    });
    const base = `${server.url}/api/v1/namespaces/default/configmaps`;
    const created = await request(base, { method: 'POST', body: obj('a') });
    const rv = created.json.metadata.resourceVersion as string;
    await request(`${base}/a`, { method: 'PUT', body: { ...obj('a'), data: { x: '1' } } });
    const stale = await request(`${base}/a`, { method: 'PUT', body: { metadata: { ...obj('a').metadata, resourceVersion: rv }, data: { x: '2' } } });
    expect(stale.status).toBe(409);
    await request(`${base}/missing`);
    await request(`${server.url}/api/v1/configmaps`);
    expect(audited.map((e) => [e.verb, e.resource, e.namespace, e.name, e.code, e.reason])).toEqual([
      ['create', 'v1/configmaps', 'default', 'a', 201, undefined],
      ['update', 'v1/configmaps', 'default', 'a', 200, undefined],
      ['update', 'v1/configmaps', 'default', 'a', 409, 'Conflict'],
      ['get', 'v1/configmaps', 'default', 'missing', 404, 'NotFound'],
    ]);
    expect(audited[0]?.resourceVersion).toBe(rv);
    expect(audited[2]?.resourceVersion).toBeUndefined();
    // The hook ran before anything else could write: it saw the version the conflict was about.
    expect(atConflict).toBe(audited[1]?.resourceVersion);
  });

  it('must be a function', async () => {
    await expect(startApiServer({ audit: 1 as never })).rejects.toThrow(new TypeError('startApiServer: option "audit" must be a function, got 1'));
  });
});
