import { CoreV1Api } from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';
import { obj } from '../helpers/objects.js';

let server: ApiServer | undefined;
const open: WireWatch[] = [];

afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await server?.close();
  server = undefined;
});

const PORT_RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

async function refused(url: string, opts: { ca?: string; token?: string } = {}): Promise<string | undefined> {
  try {
    await request(url, opts);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

describe('restart', () => {
  it.runIf(existsSync(PORT_RANGE))('picks a port below the range outgoing connections get, which none can take while the server is down', async () => {
    const firstEphemeral = Number(readFileSync(PORT_RANGE, 'utf8').trim().split(/\s+/)[0]);
    const servers = await Promise.all([startApiServer(), startApiServer({ tls: true, http2: true })]);
    try {
      for (const s of servers) {
        expect(s.port).toBeLessThan(firstEphemeral);
        expect(s.port).toBeGreaterThanOrEqual(1024);
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });

  it('ends watches, refuses connections while down, then serves the same objects and resourceVersions on the same port', async () => {
    const s = (server = await startApiServer());
    await s.create('v1/pods', obj('a'));
    await s.create('v1/pods', obj('b'));
    const before = await request(`${s.url}/api/v1/pods`);
    const rvBefore = s.resourceVersion();
    const port = s.port;
    const w = await WireWatch.open(`${s.url}/api/v1/pods?watch=true&resourceVersion=${rvBefore}`);
    open.push(w);
    await waitFor(() => s.stats.watchesOpen === 1, 'one open watch', 5_000);

    const restarted = s.restart({ downMs: 1_000 });
    // Asked at once, not after the watch's end was seen, which a loaded machine can take longer than the downtime to see.
    const whileDown = refused(`${s.url}/api/v1/pods`);
    expect(await w.waitForEnd()).toBe('error');
    expect(await whileDown).toBe('ECONNREFUSED');
    expect(s.stats.watchesOpen).toBe(0);
    await restarted;

    expect(s.port).toBe(port);
    expect(s.resourceVersion()).toBe(rvBefore);
    const after = await request(`${s.url}/api/v1/pods`);
    expect(after.status).toBe(200);
    expect(after.json).toEqual(before.json);
    // A client resumes watching from the resourceVersion it had: nothing was lost or renumbered.
    const resumed = await WireWatch.open(`${s.url}/api/v1/pods?watch=true&resourceVersion=${rvBefore}`);
    open.push(resumed);
    await s.create('v1/pods', obj('c'));
    const c = s.get<{ metadata: { resourceVersion: string } }>('v1/pods', 'default', 'c');
    await resumed.waitForLines(1);
    expect(resumed.events).toEqual([{ type: 'ADDED', object: c }]);
    expect(Number(c?.metadata.resourceVersion)).toBe(Number(rvBefore) + 1);
  });

  it('keeps the TLS material and the token across a restart', async () => {
    const s = (server = await startApiServer({ tls: true, token: 'tok' }));
    const ca = s.caPem as string;
    const yaml = s.kubeConfigYaml();
    await s.create('v1/pods', obj('a'));
    const restarted = s.restart({ downMs: 500 });
    expect(await refused(`${s.url}/api/v1/pods`, { ca, token: 'tok' })).toBe('ECONNREFUSED');
    await restarted;
    expect(s.caPem).toBe(ca);
    expect(s.kubeConfigYaml()).toBe(yaml);
    expect((await request(`${s.url}/api/v1/pods`, { ca })).status).toBe(401);
    const core = s.kubeConfig().makeApiClient(CoreV1Api);
    expect((await core.listNamespacedPod({ namespace: 'default' })).items.map((p) => p.metadata?.name)).toEqual(['a']);
  });

  it('drops requests parked by a stall and keeps writes made while down', async () => {
    const s = (server = await startApiServer());
    s.faults.inject({ type: 'stall' }, { verb: 'list' });
    const stalled = request(`${s.url}/api/v1/pods`).then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code ?? 'error',
    );
    await waitFor(() => s.stats.requests === 1, 'the stalled request to arrive', 5_000);
    s.stop();
    expect(await stalled).not.toBe('answered');
    await s.create('v1/pods', obj('written-while-down'));
    await s.restart({ downMs: 10 });
    const list = await request(`${s.url}/api/v1/pods`);
    expect(list.json.items.map((p: any) => p.metadata.name)).toEqual(['written-while-down']);
  });

  it('gives up quietly when the server is closed while down', async () => {
    const s = (server = await startApiServer());
    const restarted = s.restart({ downMs: 60_000 });
    await s.close();
    await expect(restarted).resolves.toBeUndefined();
    expect(await refused(`${s.url}/api/v1/pods`)).toBe('ECONNREFUSED');
    await expect(s.restart()).rejects.toThrow(/closed/);
  });

  it('refuses bad options with a TypeError naming them', async () => {
    const s = (server = await startApiServer());
    await expect(s.restart({ downMs: -1 })).rejects.toThrow(/restart: option "downMs" must be a finite number >= 0, got -1/);
    await expect(s.restart({ downMs: Number.NaN })).rejects.toThrow(TypeError);
    expect((await request(`${s.url}/api/v1/pods`)).status).toBe(200);
  });
});
