import type { V1Pod } from '@kubernetes/client-node';
import pc from 'picocolors';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { resolveResource } from '../../src/cli/resources.js';
import { WatchSession } from '../../src/cli/session.js';
import { renderHeader, renderTable, renderView } from '../../src/cli/view.js';
import { waitFor } from '../helpers/waitFor.js';

const plain = pc.createColors(false);
const view = (height = 40) => ({ colors: plain, width: 160, height, now: Date.now() });

const pod = (i: number): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p-${String(i).padStart(4, '0')}`, namespace: i % 3 === 0 ? 'web' : 'default' },
  spec: { containers: [{ name: 'main', image: 'busybox' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0 }] },
});

describe('the live view of rxkube watch', () => {
  let server: ApiServer | undefined;
  let session: WatchSession | undefined;
  afterEach(async () => {
    session?.stop();
    await server?.close();
  });

  it('the event rate counts live changes only, averaged since the sync: the initial list is not a burst of events', async () => {
    server = await startApiServer({ port: 0 });
    for (let i = 0; i < 300; i++) await server.create('v1/pods', pod(i));
    const s = new WatchSession({ kc: server.kubeConfig(), resource: resolveResource('pods'), namespace: undefined, labelSelector: undefined, fieldSelector: undefined });
    session = s;
    expect(s.rate()).toBe(0);
    s.start(() => {}, () => {});
    await s.informer.whenSynced({ timeout: 20_000 });
    await waitFor(() => s.syncedAfterMs !== undefined, 'the session to note the sync');
    const syncedAt = s.startedAt + (s.syncedAfterMs as number);
    // 300 adds listed, none of them live.
    expect(s.adds).toBe(300);
    expect(s.rate(syncedAt)).toBe(0);
    expect(renderHeader(s, { ...view(), now: syncedAt })[2]).toMatch(/^300 objects · 0\.0 live events\/s · 300 adds · 0 updates · 0 deletes$/);

    for (let i = 0; i < 20; i++) {
      const p = server.get<V1Pod>('v1/pods', i % 3 === 0 ? 'web' : 'default', `p-${String(i).padStart(4, '0')}`);
      await server.update('v1/pods', { ...p, metadata: { ...p?.metadata, labels: { touched: 'yes' } } });
    }
    await waitFor(() => s.updates >= 20, 'the 20 updates');
    expect(s.updates).toBe(20);
    // Read at least 4 s after the sync: 20 live events over the seconds since the sync.
    const now = Math.max(Date.now(), syncedAt + 4_000);
    const since = (now - syncedAt) / 1000;
    expect(since, 'the updates took longer than the rate window').toBeLessThan(10);
    expect(s.rate(now)).toBeCloseTo(20 / since, 6);
  }, 60_000);

  it('shows the progress of a large list page by page, then the synced cache, then live changes first', async () => {
    server = await startApiServer({ port: 0 });
    for (let i = 0; i < 1500; i++) await server.create('v1/pods', pod(i));
    // Slow list pages (500 pods each) so the view can be read while the list streams in.
    server.faults.inject({ type: 'trickle', bytesPerChunk: 16_384, intervalMs: 25 }, { verb: 'list', times: 3 });
    const s = new WatchSession({ kc: server.kubeConfig(), resource: resolveResource('pods'), namespace: undefined, labelSelector: undefined, fieldSelector: undefined });
    session = s;
    s.start(() => {}, () => {});

    let shown: string[] = [];
    const listing = (): { objects: number; pages: number } | undefined => {
      shown = renderHeader(s, view());
      const m = /^listing: ([\d,]+) objects in (\d+) pages so far \(/.exec(shown.find((l) => l.startsWith('listing: ')) ?? '');
      return m !== null && Number(m[2]) >= 1 ? { objects: Number(m[1]?.replace(/,/g, '')), pages: Number(m[2]) } : undefined;
    };
    const progress = await waitFor(listing, 'a page listed', 20_000, { describe: () => shown.join('\n') });
    expect(progress.objects).toBe(500 * progress.pages);
    expect(s.informer.status().synced).toBe(false);
    expect(renderHeader(s, view())[0]).toMatch(/syncing…$/);

    await s.informer.whenSynced({ timeout: 20_000 });
    const header = renderHeader(s, view());
    expect(header[0]).toMatch(/^rxkube watch v1\/pods · all namespaces · synced in /);
    expect(header.some((l) => l.startsWith('listing: '))).toBe(false);
    expect(header).toContain('by namespace: default 1,000 · web 500');
    expect(header[2]).toMatch(/^1,500 objects · /);

    // A live change goes to the top of the table; the rest follow by key, cut to the height.
    const changed = server.get<V1Pod>('v1/pods', 'web', 'p-0999');
    await server.update('v1/pods', { ...changed, status: { phase: 'Pending' } });
    await server.delete('v1/pods', 'default', 'p-0001');
    await waitFor(() => s.recent.size === 2, 'two recent changes');
    // Read as of the last change, so "ms ago" does not turn into seconds on a machine slow to get here.
    const table = renderTable(s, { ...view(7), now: Math.max(...[...s.recent.values()].map((c) => c.at)) });
    expect(table[0]).toMatch(/^NAMESPACE\s+NAME\s+STATUS\s+AGE\s+LAST$/);
    expect(table[1]).toMatch(/^default\s+p-0001\s+Deleted\s+\d+s\s+delete \d+ms ago$/);
    expect(table[2]).toMatch(/^web\s+p-0999\s+0\/1 Pending\s+\d+s\s+update \d+ms ago$/);
    expect(table[3]).toMatch(/^default\s+p-0002\s+1\/1 Running\s+\d+s$/);
    expect(table).toHaveLength(7);
    expect(table.at(-1)).toBe('… 1,495 more'); // 1,499 pods, 4 of them shown
    // The whole view fits the height it is given.
    expect(renderView(s, view(20)).split('\n').length).toBeLessThanOrEqual(20);
  }, 60_000);
});
