import type { EventsV1Event } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recorder } from '../../src/events/recorder.js';
import type { EventRecorderOptions } from '../../src/events/types.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';
import { settle } from '../workqueue/virtualTime.js';

// The Event recorder against the simulator over 127.0.0.1: series, rate limits, failures, close.

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.faults.clear();
});

let seq = 0;
const configMap = (ns = 'default') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${++seq}`, namespace: ns, uid: `uid-${seq}`, resourceVersion: '7' } });
const eventsAbout = (name: string): EventsV1Event[] =>
  server.list<EventsV1Event>('events.k8s.io/v1/events').filter((e) => e.regarding?.name === name);

/** A recorder on a clock the test moves, whose reports are collected. */
function make(extra: Partial<EventRecorderOptions> = {}) {
  const clock = { now: Date.parse('2025-03-01T10:00:00Z') };
  const reported: Error[] = [];
  const events = recorder(server.kubeConfig(), {
    reportingController: 'example.com/test-controller',
    reportingInstance: 'test-0',
    now: () => clock.now,
    onError: (err) => reported.push(err),
    ...extra,
  });
  const settled = (what: string) => waitFor(() => events.status().pending === 0, what);
  return { events, clock, reported, settled };
}

describe('publish', () => {
  it('returns at once and writes the Event in the background, with what kube-apiserver requires', async () => {
    const { events, settled } = make();
    const cm = configMap();
    const before = server.stats.requests;
    const result = events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'all good' });
    expect(result).toBeUndefined();
    expect(server.stats.requests).toBe(before);
    expect(events.status()).toMatchObject({ published: 1, pending: 1 });
    await settled('the event to be written');
    const [event, ...more] = eventsAbout(cm.metadata.name);
    expect(more).toHaveLength(0);
    expect(event).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'default', name: expect.stringMatching(new RegExp(`^${cm.metadata.name}\\.[0-9a-f]+$`)) },
      eventTime: '2025-03-01T10:00:00.000000Z',
      reportingController: 'example.com/test-controller',
      reportingInstance: 'test-0',
      type: 'Normal',
      reason: 'Synced',
      action: 'Reconcile',
      note: 'all good',
      regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: cm.metadata.name, namespace: 'default', uid: cm.metadata.uid, resourceVersion: '7' },
    });
    expect(event?.series).toBeUndefined();
    expect(events.status()).toMatchObject({ published: 1, written: 1, failed: 0, pending: 0 });
  });

  it('folds repeats into a series whose count and lastObservedTime a patch updates', async () => {
    const { events, clock, settled } = make();
    const cm = configMap();
    const synced = { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'same' } as const;
    events.publish(cm, synced);
    await settled('the first event');
    clock.now += 1_500;
    events.publish({ ...cm, metadata: { ...cm.metadata, resourceVersion: '8' } }, synced);
    await settled('the series');
    const [event] = eventsAbout(cm.metadata.name);
    expect(event?.series).toEqual({ count: 2, lastObservedTime: '2025-03-01T10:00:01.500000Z' });
    // Repeats published while a write waits cost no request: they only count.
    const requests = server.stats.requests;
    for (let i = 0; i < 5; i++) {
      clock.now += 1_000;
      events.publish(cm, synced);
    }
    await settled('the folded repeats');
    expect(server.stats.requests - requests).toBe(1);
    expect(eventsAbout(cm.metadata.name)).toHaveLength(1);
    expect(eventsAbout(cm.metadata.name)[0]?.series).toEqual({ count: 7, lastObservedTime: '2025-03-01T10:00:06.500000Z' });
    expect(events.status()).toMatchObject({ published: 7, written: 3, folded: 4 });
  });

  it('another note, reason, type or related object is another Event; a repeat after the series window starts a new one', async () => {
    const { events, clock, settled } = make({ seriesWindowMs: 60_000 });
    const cm = configMap();
    events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'a' });
    events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'b' });
    events.publish(cm, { type: 'Warning', reason: 'Synced', action: 'Reconcile', note: 'a' });
    events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'a', related: configMap() });
    await settled('four events');
    expect(eventsAbout(cm.metadata.name)).toHaveLength(4);
    expect(eventsAbout(cm.metadata.name).find((e) => e.related !== undefined)?.related?.kind).toBe('ConfigMap');
    clock.now += 60_001;
    events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'a' });
    await settled('a fifth');
    expect(eventsAbout(cm.metadata.name)).toHaveLength(5);
    expect(eventsAbout(cm.metadata.name).every((e) => e.series === undefined)).toBe(true);
  });

  it('an Event about a cluster-scoped object goes to the default namespace; a long note is cut to 1 KiB', async () => {
    const { events, settled } = make();
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${++seq}` } };
    events.publish(node, { type: 'Warning', reason: 'Pressure', action: 'Check', note: 'é'.repeat(700) });
    await settled('the node event');
    const [event] = eventsAbout(node.metadata.name);
    expect(event?.metadata?.namespace).toBe('default');
    expect(event?.regarding).toEqual({ apiVersion: 'v1', kind: 'Node', name: node.metadata.name });
    expect(Buffer.byteLength(event?.note ?? '')).toBe(1024);
    expect(event?.note).toBe('é'.repeat(512));
  });

  it('an Event whose series expired on the server is created again with the count so far', async () => {
    const { events, clock, settled } = make();
    const cm = configMap();
    const evicted = { type: 'Normal', reason: 'Evicted', action: 'Reconcile' } as const;
    events.publish(cm, evicted);
    await settled('the first event');
    const [first] = eventsAbout(cm.metadata.name);
    await server.delete('events.k8s.io/v1/events', 'default', first?.metadata?.name ?? '');
    clock.now += 1_000;
    events.publish(cm, evicted);
    await settled('the recreated event');
    const [again, ...more] = eventsAbout(cm.metadata.name);
    expect(more).toHaveLength(0);
    expect(again?.metadata?.name).not.toBe(first?.metadata?.name);
    expect(again?.series?.count).toBe(2);
  });
});

describe('limits', () => {
  it('each object has a token bucket: past its burst its events are not written, until the bucket refills', async () => {
    const { events, clock, settled } = make({ burst: 2, refillIntervalMs: 10_000 });
    const noisy = configMap();
    const quiet = configMap();
    for (const reason of ['A', 'B', 'C']) events.publish(noisy, { type: 'Normal', reason, action: 'Reconcile' });
    events.publish(quiet, { type: 'Normal', reason: 'A', action: 'Reconcile' });
    await settled('the allowed events');
    expect(eventsAbout(noisy.metadata.name).map((e) => e.reason).sort()).toEqual(['A', 'B']);
    expect(eventsAbout(quiet.metadata.name)).toHaveLength(1);
    expect(events.status().rateLimited).toBe(1);
    clock.now += 10_000;
    events.publish(noisy, { type: 'Normal', reason: 'C', action: 'Reconcile' });
    await settled('the refilled event');
    expect(eventsAbout(noisy.metadata.name).map((e) => e.reason).sort()).toEqual(['A', 'B', 'C']);
  });

  it('a repeat over the limit still counts in its series, written with the next allowed write', async () => {
    const { events, clock, settled } = make({ burst: 1, refillIntervalMs: 10_000 });
    const cm = configMap();
    const synced = { type: 'Normal', reason: 'Synced', action: 'Reconcile' } as const;
    events.publish(cm, synced);
    await settled('the first event');
    clock.now += 1_000;
    events.publish(cm, synced);
    await settled('nothing more');
    expect(eventsAbout(cm.metadata.name)[0]?.series).toBeUndefined();
    clock.now += 10_000;
    events.publish(cm, synced);
    await settled('the series');
    expect(eventsAbout(cm.metadata.name)[0]?.series?.count).toBe(3);
  });

  it('the queue is bounded: with writes stuck, an event past maxPending is dropped and reported', async () => {
    const { events, reported, settled } = make({ maxPending: 2, timeoutMs: 300 });
    server.faults.inject({ type: 'stall' }, { verb: 'create', resource: 'events.k8s.io/v1/events', times: 3 });
    for (let i = 0; i < 2; i++) events.publish(configMap(), { type: 'Normal', reason: 'Queued', action: 'Reconcile' });
    // The first write leaves the queue on the next turn and stalls on the server. The next three come before any timer
    // can run, so its timeout cannot have ended it and let the second write in, however slow the machine.
    await settle();
    for (let i = 0; i < 3; i++) events.publish(configMap(), { type: 'Normal', reason: 'Queued', action: 'Reconcile' });
    // One write in flight, two waiting, the other two dropped.
    expect(events.status()).toMatchObject({ pending: 3, dropped: 2 });
    expect(reported.map((e) => e.message)).toEqual([expect.stringMatching(/2 event writes are waiting \(maxPending\); an event about ConfigMap cm-\d+ was dropped$/)]);
    await settled('the stuck writes to time out');
    expect(events.status()).toMatchObject({ failed: 3, written: 0 });
  });
});

describe('failures', () => {
  it('never reach the caller: they are counted and reported, one per kind per interval, saying how many were held back', async () => {
    const { events, clock, reported, settled } = make({ reportIntervalMs: 60_000 });
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'create', resource: 'events.k8s.io/v1/events', times: 4 });
    for (let i = 0; i < 3; i++) events.publish(configMap(), { type: 'Warning', reason: 'Failing', action: 'Reconcile' });
    await settled('three failed writes');
    expect(events.status()).toMatchObject({ failed: 3, written: 0 });
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(KubeApiError);
    expect(reported[0]?.message).toMatch(/^create events\.k8s\.io\/v1\/events default\/cm-\d+\.[0-9a-f]+: 500/);
    clock.now += 60_000;
    events.publish(configMap(), { type: 'Warning', reason: 'Failing', action: 'Reconcile' });
    await settled('a fourth failed write');
    expect(reported).toHaveLength(2);
    expect(reported[1]?.message).toMatch(/\(2 more like it held back\)$/);
    // A failed create is forgotten: the next occurrence creates the Event.
    const cm = configMap();
    server.faults.inject({ type: 'status', status: 503 }, { verb: 'create', resource: 'events.k8s.io/v1/events' });
    events.publish(cm, { type: 'Normal', reason: 'Retry', action: 'Reconcile' });
    await settled('the failed create');
    events.publish(cm, { type: 'Normal', reason: 'Retry', action: 'Reconcile' });
    await settled('the second create');
    expect(eventsAbout(cm.metadata.name)).toHaveLength(1);
  });

  it('a malformed event is dropped and reported as a TypeError, never thrown', async () => {
    const { events, reported } = make();
    const cm = configMap();
    const listed = { metadata: { name: 'from-a-list', namespace: 'default' } }; // as client-node's typed lists hand objects over
    expect(() => events.publish(listed, { type: 'Normal', reason: 'Synced', action: 'Reconcile' })).not.toThrow();
    events.publish(cm, { type: 'Info' as never, reason: 'Synced', action: 'Reconcile' });
    events.publish(cm, { type: 'Normal', reason: '', action: 'Reconcile' });
    events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'x'.repeat(129) });
    events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', related: { metadata: { name: 'x' } } });
    events.publish(cm, null as never);
    expect(events.status()).toMatchObject({ published: 6, dropped: 6, pending: 0 });
    // One kind of failure (TypeError): reported once, as the rest are held back.
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(TypeError);
    expect(reported[0]?.message).toMatch(/regarding: from-a-list has no apiVersion and kind/);
    await events.close();
  });
});

describe('close', () => {
  it('writes what was published, then takes nothing more and leaves no timer', async () => {
    const { events } = make();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const cms = Array.from({ length: 5 }, () => configMap());
    for (const cm of cms) events.publish(cm, { type: 'Normal', reason: 'Closing', action: 'Reconcile' });
    expect(events.status().pending).toBe(5);
    await events.close();
    expect(events.status()).toMatchObject({ pending: 0, written: 5, closed: true });
    for (const cm of cms) expect(eventsAbout(cm.metadata.name)).toHaveLength(1);
    events.publish(configMap(), { type: 'Normal', reason: 'Late', action: 'Reconcile' });
    expect(events.status()).toMatchObject({ dropped: 1, pending: 0 });
    expect(timers()).toBeLessThanOrEqual(before);
    await events.close();
  });

  it('aborting the signal closes it the same way', async () => {
    const ac = new AbortController();
    const { events } = make({ signal: ac.signal });
    const cm = configMap();
    events.publish(cm, { type: 'Normal', reason: 'Signalled', action: 'Reconcile' });
    ac.abort();
    expect(events.status().closed).toBe(true);
    await waitFor(() => events.status().pending === 0, 'the flush');
    expect(eventsAbout(cm.metadata.name)).toHaveLength(1);
    const { events: late } = make({ signal: ac.signal });
    late.publish(cm, { type: 'Normal', reason: 'Late', action: 'Reconcile' });
    expect(late.status()).toMatchObject({ closed: true, dropped: 1 });
  });
});

describe('options', () => {
  it.each([
    ['reportingController', { reportingController: '' }],
    ['reportingController', { reportingController: 'Not A Name' }],
    ['reportingController', { reportingController: 'example.com/' + 'x'.repeat(64) }],
    ['reportingInstance', { reportingInstance: '' }],
    ['reportingInstance', { reportingInstance: 'x'.repeat(129) }],
    ['burst', { burst: 0 }],
    ['burst', { burst: 1.5 }],
    ['refillIntervalMs', { refillIntervalMs: -1 }],
    ['seriesWindowMs', { seriesWindowMs: Number.NaN }],
    ['maxPending', { maxPending: 0 }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['reportIntervalMs', { reportIntervalMs: Infinity }],
    ['onError', { onError: 'log' }],
    ['signal', { signal: {} }],
  ])('a bad %s is a TypeError naming it', (name, bad) => {
    const opts = { reportingController: 'ctl', reportingInstance: 'i', ...bad } as never;
    expect(() => recorder(server.kubeConfig(), opts)).toThrow(TypeError);
    expect(() => recorder(server.kubeConfig(), opts)).toThrow(new RegExp(`^${name}: `));
  });

  it('takes qualified controller names and a plain one', () => {
    for (const reportingController of ['ctl', 'example.com/my-controller', 'a.b.c/Ctl_1.x']) {
      expect(() => recorder(server.kubeConfig(), { reportingController, reportingInstance: 'i' })).not.toThrow();
    }
  });
});
