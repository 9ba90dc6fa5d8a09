import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlreadyExists, isConflict, isServerError, KubeApiError } from '../../src/errors/api/index.js';
import { leaderElection } from '../../src/leaderelection/leaderElection.js';
import { leaseLock, type Lease } from '../../src/leaderelection/leaseLock.js';
import type { LeaderElectionRecord, Leadership } from '../../src/leaderelection/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});

const record = (holder: string, transitions = 0): LeaderElectionRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: '2026-01-01T00:00:00.000000Z',
  renewTime: '2026-01-01T00:00:01.000000Z',
  leaderTransitions: transitions,
});
const stored = (name: string): Lease | undefined => server.get<Lease>('coordination.k8s.io/v1/leases', 'default', name);

describe('leaseLock', () => {
  it('rejects bad options up front', () => {
    const kc = server.kubeConfig();
    expect(() => leaseLock(kc, { namespace: '', name: 'x' })).toThrow(/namespace/);
    expect(() => leaseLock(kc, { namespace: 'default', name: '' })).toThrow(/name/);
    expect(() => leaseLock(kc, { namespace: 'default', name: 'x', labels: { a: 1 as never } })).toThrow(/labels/);
    expect(() => leaseLock(kc, { namespace: 'default', name: 'x', timeoutMs: -1 })).toThrow(/timeoutMs/);
  });

  it('keeps the record in the Lease spec, with conditional writes', async () => {
    const lock = leaseLock(server.kubeConfig(), { namespace: 'default', name: 'lock-a', labels: { app: 'demo' } });
    const signal = new AbortController().signal;
    expect(lock.describe()).toBe('default/lock-a');
    expect(await lock.get(signal)).toBeUndefined();

    const v1 = await lock.create(record('a'), signal);
    expect(stored('lock-a')?.spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:01.000000Z',
      leaseTransitions: 0,
    });
    expect(stored('lock-a')?.metadata?.labels).toEqual({ app: 'demo' });
    const again = await lock.create(record('b'), signal).catch((e: unknown) => e);
    expect(isAlreadyExists(again)).toBe(true);

    const read = await lock.get(signal);
    expect(read?.record).toEqual(record('a'));

    // Someone else labels the Lease: the update keeps that label and still carries the version it read.
    await server.patch('coordination.k8s.io/v1/leases', 'default', 'lock-a', { metadata: { labels: { other: 'x' } } });
    const stale = await lock.update(record('b', 1), v1, signal).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    const fresh = await lock.get(signal);
    await lock.update(record('b', 1), fresh!.version, signal);
    expect(stored('lock-a')?.spec?.holderIdentity).toBe('b');
    expect(stored('lock-a')?.metadata?.labels).toEqual({ app: 'demo', other: 'x' });
  });
});

describe('leaderElection over HTTP (in process)', () => {
  it('acquires, renews by conditional update, and releases on unsubscribe so a successor need not wait', async () => {
    const lock = leaseLock(server.kubeConfig(), { namespace: 'default', name: 'lock-http' });
    const errors: Error[] = [];
    const timing = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 100, releaseOnCancel: true, onError: (e: Error) => errors.push(e) };
    const states: Leadership[] = [];
    const first = leaderElection({ lock, identity: 'solo', ...timing }).subscribe((l) => states.push(l));
    await waitFor(() => states.some((l) => l.leading), 'leadership', 10_000);
    expect(states).toEqual([{ leading: false, leader: undefined }, { leading: true, leader: 'solo' }]);
    const acquired = stored('lock-http')!.spec!;
    await waitFor(() => stored('lock-http')?.spec?.renewTime !== acquired.renewTime, 'a renewal', 10_000);
    expect(stored('lock-http')?.spec).toMatchObject({ holderIdentity: 'solo', acquireTime: acquired.acquireTime, leaseTransitions: 0, leaseDurationSeconds: 2 });

    first.unsubscribe();
    await waitFor(() => stored('lock-http')?.spec?.holderIdentity === '', 'the release', 10_000);
    expect(stored('lock-http')?.spec).toMatchObject({ leaseDurationSeconds: 1, leaseTransitions: 0 });

    // A released Lease is free whatever its times say: make it look valid for an hour, so a successor that waited
    // for an expiry would still be waiting when the wait below gives up.
    await server.patch('coordination.k8s.io/v1/leases', 'default', 'lock-http', { spec: { leaseDurationSeconds: 3600 } });
    const next: Leadership[] = [];
    const second = leaderElection({ lock: leaseLock(server.kubeConfig(), { namespace: 'default', name: 'lock-http' }), identity: 'next', ...timing }).subscribe((l) => next.push(l));
    try {
      await waitFor(() => next.some((l) => l.leading), 'the successor', 10_000);
      expect(stored('lock-http')?.spec).toMatchObject({ holderIdentity: 'next', leaseTransitions: 1 });
    } finally {
      second.unsubscribe();
    }
    expect(errors).toEqual([]);
  });

  it('reports failures other than contention, and keeps trying', async () => {
    const lock = leaseLock(server.kubeConfig(), { namespace: 'default', name: 'lock-faulty' });
    const errors: Error[] = [];
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'get', resource: 'coordination.k8s.io/v1/leases', times: 2 });
    const sub = leaderElection({ lock, identity: 'x', leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 100, onError: (e) => errors.push(e) }).subscribe();
    try {
      await waitFor(() => stored('lock-faulty')?.spec?.holderIdentity === 'x', 'the lease after the faults', 10_000);
      expect(errors).toHaveLength(2);
      expect(errors.every((e) => isServerError(e) && e instanceof KubeApiError && e.status === 500)).toBe(true);
      expect(errors[0]?.message).toMatch(/get coordination\.k8s\.io\/v1\/leases default\/lock-faulty: 500/);
    } finally {
      sub.unsubscribe();
    }
  });
});
