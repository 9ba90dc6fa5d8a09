import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  await server.close();
});

describe('churn', () => {
  it('makes exactly the requested writes, all visible to a watch', async () => {
    await server.create('v1/pods', { metadata: { name: 'pre', namespace: 'default' } });
    const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`);
    try {
      const churn = server.churn({ resource: 'v1/pods', namespace: 'default', creates: 50, updates: 80, deletes: 20, perSecond: Infinity, seed: 7 });
      expect(await churn.done).toEqual({ creates: 50, updates: 80, deletes: 20 });
      expect(server.list('v1/pods', 'default')).toHaveLength(1 + 50 - 20);
      await w.waitForLines(150);
      const counts = { ADDED: 0, MODIFIED: 0, DELETED: 0 } as Record<string, number>;
      for (const e of w.events) counts[e.type] = (counts[e.type] ?? 0) + 1;
      expect(counts).toEqual({ ADDED: 50, MODIFIED: 80, DELETED: 20 });
    } finally {
      w.close();
    }
  });

  it('keeps every updated pod coherent: phase, container states and Ready conditions agree', async () => {
    // Pods as a seeded cluster has them: most running and ready, some still starting.
    for (let i = 0; i < 12; i++) {
      const ready = i % 3 !== 0;
      await server.create('v1/pods', {
        metadata: { name: `seed-${i}`, namespace: 'default' },
        spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'proxy:1' }] },
        status: {
          phase: ready ? 'Running' : 'Pending',
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
          containerStatuses: ['app', 'sidecar'].map((name) => ({ name, ready, restartCount: 0, image: '', imageID: '', state: ready ? { running: {} } : { waiting: { reason: 'ContainerCreating' } } })),
        },
      });
    }
    const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`);
    try {
      await server.churn({ resource: 'v1/pods', namespace: 'default', creates: 10, updates: 300, perSecond: Infinity, seed: 3 }).done;
      await w.waitForLines(310);
      const updated = w.events.filter((e) => e.type === 'MODIFIED').map((e) => e.object);
      expect(updated).toHaveLength(300);
      const pods = [...updated, ...server.list<any>('v1/pods', 'default')];
      for (const pod of pods) {
        const statuses: any[] = pod.status?.containerStatuses ?? [];
        const ready = pod.status?.phase === 'Running' && statuses.length > 0 && statuses.every((c) => c.ready === true);
        const where = `${pod.metadata.name}@${pod.metadata.resourceVersion}: ${JSON.stringify(pod.status)}`;
        // A ready container is a running one, in a running pod.
        for (const c of statuses) if (c.ready === true) expect(pod.status.phase === 'Running' && c.state?.running !== undefined, where).toBe(true);
        const condition = pod.status?.conditions?.find((c: any) => c.type === 'Ready')?.status;
        if (condition !== undefined) expect(condition, where).toBe(ready ? 'True' : 'False');
      }
      // An update rewrites the whole status: every container reported, the pod running, ready or not.
      for (const pod of updated) {
        expect(pod.status.phase).toBe('Running');
        expect(pod.status.containerStatuses.map((c: any) => c.name)).toEqual(pod.spec.containers.map((c: any) => c.name));
      }
      // Both kinds of update happen: pods become ready, and ready pods stop being ready.
      expect(updated.some((p) => p.status.containerStatuses.every((c: any) => c.ready))).toBe(true);
      expect(updated.some((p) => p.status.containerStatuses.every((c: any) => !c.ready))).toBe(true);
    } finally {
      w.close();
    }
  });

  it('stops early on stop(), resolving with what was done', async () => {
    const churn = server.churn({ creates: 1_000_000, perSecond: 200 });
    await waitFor(() => server.stats.objects > 0, 'the first objects', 5_000);
    churn.stop();
    const result = await churn.done;
    expect(result.creates).toBeGreaterThan(0);
    expect(result.creates).toBeLessThan(1_000_000);
    expect(server.stats.objects).toBe(result.creates);
  });

  it('works on custom resources and validates its options', async () => {
    server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });
    const done = await server.churn({ resource: 'example.com/v1/widgets', creates: 5, updates: 5, perSecond: Infinity }).done;
    expect(done).toEqual({ creates: 5, updates: 5, deletes: 0 });
    expect(server.list<any>('example.com/v1/widgets').some((w) => w.metadata.generation > 1)).toBe(true);
    expect(() => server.churn({ creates: -1 })).toThrow(/creates/);
    expect(() => server.churn({ perSecond: 0 })).toThrow(/perSecond/);
  });

  it('reports its work in stats', async () => {
    await server.churn({ creates: 10, perSecond: Infinity }).done;
    expect(server.stats).toMatchObject({ objects: 10, historyEvents: 10, resourceVersion: server.resourceVersion(), watchesOpen: 0 });
  });
});
