import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request } from './wire.js';

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  await server.close();
});

async function seed(n: number, namespace = 'default'): Promise<void> {
  for (let i = 0; i < n; i++) {
    await server.create('v1/configmaps', { metadata: { name: `cm-${String(i).padStart(3, '0')}`, namespace, labels: { parity: i % 2 === 0 ? 'even' : 'odd' } } });
  }
}

const names = (list: any): string[] => list.items.map((o: any) => o.metadata.name);

describe('LIST', () => {
  it('returns the list kind, apiVersion and the current resourceVersion', async () => {
    await seed(3);
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: server.resourceVersion() } });
    expect(res.json.metadata.continue).toBeUndefined();
    expect(names(res.json)).toEqual(['cm-000', 'cm-001', 'cm-002']);
  });

  it('pages with limit and continue, counting the remaining items', async () => {
    await seed(5);
    const first = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=2`);
    expect(names(first.json)).toEqual(['cm-000', 'cm-001']);
    expect(first.json.metadata.remainingItemCount).toBe(3);
    expect(typeof first.json.metadata.continue).toBe('string');
    const second = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(names(second.json)).toEqual(['cm-002', 'cm-003']);
    expect(second.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion);
    const third = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(second.json.metadata.continue)}`);
    expect(names(third.json)).toEqual(['cm-004']);
    expect(third.json.metadata.continue).toBeUndefined();
    expect(third.json.metadata.remainingItemCount).toBeUndefined();
  });

  it('pages through client-node', async () => {
    await seed(3);
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
    const second = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: first.metadata?._continue });
    expect([...first.items, ...second.items].map((c) => c.metadata?.name)).toEqual(['cm-000', 'cm-001', 'cm-002']);
  });

  it('serves later pages from the snapshot of the first, whatever was written since', async () => {
    await seed(4);
    const first = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=2`);
    await server.delete('v1/configmaps', 'default', 'cm-003');
    await server.create('v1/configmaps', { metadata: { name: 'cm-0025', namespace: 'default' } });
    await server.patch('v1/configmaps', 'default', 'cm-002', { data: { changed: 'yes' } });
    const rest = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=10&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(names(rest.json)).toEqual(['cm-002', 'cm-003']);
    expect(rest.json.items[0].data).toBeUndefined();
    expect(rest.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion);
    const fresh = await request(`${server.url}/api/v1/namespaces/default/configmaps`);
    expect(names(fresh.json)).toEqual(['cm-000', 'cm-001', 'cm-002', 'cm-0025']);
  });

  it('expires continue tokens after compaction with 410 Expired', async () => {
    await seed(3);
    const first = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=1`);
    server.compact();
    const next = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=1&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(next.status).toBe(410);
    expect(next.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
  });

  it('expires continue tokens once the history window has moved past them', async () => {
    await server.close();
    server = await startApiServer({ history: { maxEvents: 3 } });
    await seed(3);
    const first = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=1`);
    const token = encodeURIComponent(first.json.metadata.continue);
    await server.create('v1/configmaps', { metadata: { name: 'x1', namespace: 'default' } });
    expect((await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=1&continue=${token}`)).status).toBe(200);
    for (const n of ['x2', 'x3', 'x4']) await server.create('v1/configmaps', { metadata: { name: n, namespace: 'default' } });
    expect((await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=1&continue=${token}`)).status).toBe(410);
  });

  it('rejects a continue token it did not issue, and resourceVersion with continue', async () => {
    await seed(2);
    expect((await request(`${server.url}/api/v1/configmaps?continue=garbage`)).status).toBe(400);
    const first = await request(`${server.url}/api/v1/configmaps?limit=1`);
    const both = await request(`${server.url}/api/v1/configmaps?limit=1&resourceVersion=5&continue=${encodeURIComponent(first.json.metadata.continue)}`);
    expect(both.status).toBe(400);
  });

  it('reads an exact older resourceVersion from history', async () => {
    await seed(2);
    const rv = server.resourceVersion();
    await server.delete('v1/configmaps', 'default', 'cm-000');
    await server.create('v1/configmaps', { metadata: { name: 'late', namespace: 'default' } });
    const exact = await request(`${server.url}/api/v1/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(200);
    expect(exact.json.metadata.resourceVersion).toBe(rv);
    expect(names(exact.json)).toEqual(['cm-000', 'cm-001']);
    // Paged with an explicit resourceVersion and no match: the legacy exact semantics.
    const legacy = await request(`${server.url}/api/v1/configmaps?resourceVersion=${rv}&limit=5`);
    expect(names(legacy.json)).toEqual(['cm-000', 'cm-001']);
    const notOlder = await request(`${server.url}/api/v1/configmaps?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
    expect(notOlder.json.metadata.resourceVersion).toBe(server.resourceVersion());
    expect(names(notOlder.json)).toEqual(['cm-001', 'late']);
    server.compact();
    const gone = await request(`${server.url}/api/v1/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(gone.status).toBe(410);
    expect(gone.json.reason).toBe('Expired');
    // kube-apiserver v1.34.4's exact wording.
    expect(gone.json.message).toBe('The resourceVersion for the provided list is too old.');
  });

  it('answers "0" and unset from the current state, and a future resourceVersion with 504', async () => {
    await seed(1);
    for (const q of ['', '?resourceVersion=0', '?resourceVersion=0&resourceVersionMatch=NotOlderThan']) {
      const res = await request(`${server.url}/api/v1/configmaps${q}`);
      expect(res.json.metadata.resourceVersion).toBe(server.resourceVersion());
    }
    const future = await request(`${server.url}/api/v1/configmaps?resourceVersion=999&resourceVersionMatch=NotOlderThan`);
    expect(future.status).toBe(504);
    expect(future.json.details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });

  it('rejects invalid resourceVersion parameters as kube-apiserver does', async () => {
    const cases: [string, number][] = [
      ['resourceVersionMatch=Exact', 422],
      ['resourceVersion=0&resourceVersionMatch=Exact', 422],
      ['resourceVersion=1&resourceVersionMatch=Sometimes', 422],
      ['resourceVersion=abc', 400],
      ['limit=x', 400],
    ];
    for (const [q, code] of cases) {
      const res = await request(`${server.url}/api/v1/configmaps?${q}`);
      expect({ q, code: res.status, kind: res.json?.kind }).toEqual({ q, code, kind: 'Status' });
    }
  });

  it('filters by namespace, label selector and field selector', async () => {
    await seed(4, 'a');
    await seed(2, 'b');
    const byNs = await request(`${server.url}/api/v1/namespaces/b/configmaps`);
    expect(byNs.json.items.map((o: any) => o.metadata.namespace)).toEqual(['b', 'b']);
    const byLabel = await request(`${server.url}/api/v1/configmaps?labelSelector=${encodeURIComponent('parity=even')}`);
    expect(byLabel.json.items.map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['a/cm-000', 'a/cm-002', 'b/cm-000']);
    const setBased = await request(`${server.url}/api/v1/namespaces/a/configmaps?labelSelector=${encodeURIComponent('parity in (odd),!missing')}`);
    expect(names(setBased.json)).toEqual(['cm-001', 'cm-003']);
    const byField = await request(`${server.url}/api/v1/configmaps?fieldSelector=${encodeURIComponent('metadata.namespace=b,metadata.name!=cm-000')}`);
    expect(names(byField.json)).toEqual(['cm-001']);
  });

  it('supports per-resource field selectors and rejects unsupported ones', async () => {
    await server.create('v1/pods', { metadata: { name: 'p1', namespace: 'default' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
    await server.create('v1/pods', { metadata: { name: 'p2', namespace: 'default' }, spec: { nodeName: 'n2' } });
    const running = await request(`${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent('status.phase=Running')}`);
    expect(names(running.json)).toEqual(['p1']);
    const onNode = await request(`${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent('spec.nodeName=n2')}`);
    expect(names(onNode.json)).toEqual(['p2']);
    const unsupported = await request(`${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent('spec.hostname=x')}`);
    expect(unsupported.status).toBe(400);
    expect(unsupported.json.message).toContain('field label not supported');
    const badLabel = await request(`${server.url}/api/v1/pods?labelSelector=${encodeURIComponent('a in (')}`);
    expect(badLabel.status).toBe(400);
  });

  it('pages with selectors without counting remaining items', async () => {
    await seed(6);
    const first = await request(`${server.url}/api/v1/namespaces/default/configmaps?limit=2&labelSelector=parity%3Dodd`);
    expect(names(first.json)).toEqual(['cm-001', 'cm-003']);
    expect(first.json.metadata.remainingItemCount).toBeUndefined();
    const second = await request(
      `${server.url}/api/v1/namespaces/default/configmaps?limit=2&labelSelector=parity%3Dodd&continue=${encodeURIComponent(first.json.metadata.continue)}`,
    );
    expect(names(second.json)).toEqual(['cm-005']);
  });

  it('deletes a collection by selector', async () => {
    await seed(4);
    const res = await request(`${server.url}/api/v1/namespaces/default/configmaps?labelSelector=parity%3Deven`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(names(res.json)).toEqual(['cm-000', 'cm-002']);
    expect(server.list<any>('v1/configmaps').map((o) => o.metadata.name)).toEqual(['cm-001', 'cm-003']);
  });
});
