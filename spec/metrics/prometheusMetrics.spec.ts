import { afterEach, describe, expect, it } from 'vitest';
import { BehaviorSubject, Subject } from 'rxjs';
import { Counter, Registry } from 'prom-client';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { formatBound } from '../../src/metrics/snapshotMetric.js';
import { workQueue } from '../../src/workqueue/index.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import type { WorkQueueMetrics } from '../../src/workqueue/metrics.js';
import { virtualClock } from '../workqueue/virtualTime.js';
import { family, parseExposition, valueOf } from './exposition.js';

afterEach(() => setErrorReporter(undefined));

const QUEUE_BOUNDS = ['1e-08', '1e-07', '1e-06', '1e-05', '0.0001', '0.001', '0.01', '0.1', '1', '10', '100', '1000', '+Inf'];

describe('prometheusMetrics: work queues', () => {
  it("exports a queue under client-go's names, label name, with its histograms' buckets, sum and count", async () => {
    const clock = virtualClock();
    const q = workQueue<string>({ name: 'things', scheduler: clock.scheduler });
    const metrics = prometheusMetrics();
    metrics.addWorkQueue(q);
    q.add('a');
    q.add('b');
    q.add('b'); // collapsed into the waiting b: not an add
    clock.advance(2_000);
    const got = await q.get();
    clock.advance(500);
    q.done(got.item!);
    await q.get(); // b, still being processed: unfinished work
    clock.advance(3_000);
    q.addAfter('c', 60_000);

    const text = await metrics.metrics();
    const f = parseExposition(text);
    const types = Object.fromEntries([...f.values()].filter((x) => x.name.startsWith('workqueue_')).map((x) => [x.name, x.type]));
    expect(types).toEqual({
      workqueue_depth: 'gauge',
      workqueue_adds_total: 'counter',
      workqueue_queue_duration_seconds: 'histogram',
      workqueue_work_duration_seconds: 'histogram',
      workqueue_unfinished_work_seconds: 'gauge',
      workqueue_longest_running_processor_seconds: 'gauge',
      workqueue_retries_total: 'counter',
    });
    const name = { name: 'things' };
    expect(valueOf(f, 'workqueue_depth', name)).toBe(0);
    expect(valueOf(f, 'workqueue_adds_total', name)).toBe(2);
    expect(valueOf(f, 'workqueue_retries_total', name)).toBe(1);
    expect(valueOf(f, 'workqueue_unfinished_work_seconds', name)).toBe(3);
    expect(valueOf(f, 'workqueue_longest_running_processor_seconds', name)).toBe(3);
    // a waited 2 s and b 2.5 s (both in the 10 s bucket); a took 0.5 s (the 1 s bucket).
    const buckets = family(f, 'workqueue_queue_duration_seconds').samples.filter((s) => s.name === 'workqueue_queue_duration_seconds_bucket');
    expect(buckets.map((s) => s.labels['le'])).toEqual(QUEUE_BOUNDS);
    expect(buckets.every((s) => s.labels['name'] === 'things')).toBe(true);
    expect(buckets.map((s) => s.value)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2]);
    expect(valueOf(f, 'workqueue_queue_duration_seconds_sum', name)).toBe(4.5);
    expect(valueOf(f, 'workqueue_queue_duration_seconds_count', name)).toBe(2);
    expect(valueOf(f, 'workqueue_work_duration_seconds_bucket', { ...name, le: '0.1' })).toBe(0);
    expect(valueOf(f, 'workqueue_work_duration_seconds_bucket', { ...name, le: '1' })).toBe(1);
    expect(valueOf(f, 'workqueue_work_duration_seconds_sum', name)).toBe(0.5);
    expect(valueOf(f, 'workqueue_work_duration_seconds_count', name)).toBe(1);
    // The exposition reads the queue's own snapshot.
    const m: WorkQueueMetrics = q.metrics();
    expect(valueOf(f, 'workqueue_adds_total', name)).toBe(m.adds);
    q.shutDown();
  });

  it('a remover takes the series out of the next scrape and frees the name; a name is exported once', async () => {
    const metrics = prometheusMetrics();
    const a = workQueue<string>({ name: 'shared' });
    const b = workQueue<string>({ name: 'shared' });
    const remove = metrics.addWorkQueue(a);
    expect(() => metrics.addWorkQueue(b)).toThrow(/work queue named "shared" is already exported/);
    a.add('x');
    expect(valueOf(parseExposition(await metrics.metrics()), 'workqueue_adds_total', { name: 'shared' })).toBe(1);
    remove();
    remove(); // idempotent
    const after = parseExposition(await metrics.metrics());
    expect(family(after, 'workqueue_adds_total').samples).toEqual([]);
    expect(family(after, 'workqueue_queue_duration_seconds').samples).toEqual([]);
    const removeB = metrics.addWorkQueue(b);
    expect(valueOf(parseExposition(await metrics.metrics()), 'workqueue_adds_total', { name: 'shared' })).toBe(0);
    // An old remover cannot take out what was added under its name since.
    remove();
    expect(valueOf(parseExposition(await metrics.metrics()), 'workqueue_adds_total', { name: 'shared' })).toBe(0);
    removeB();
    a.shutDown();
    b.shutDown();
  });
});

describe('prometheusMetrics: leader election', () => {
  it('is 1 after the stream said true, 0 before, after false, and once it ends; the remover unsubscribes', async () => {
    const metrics = prometheusMetrics();
    const leading = new Subject<boolean>();
    const remove = metrics.addLeaderElection('my-controller', leading);
    const status = async () => valueOf(parseExposition(await metrics.metrics()), 'leader_election_master_status', { name: 'my-controller' });
    expect(family(parseExposition(await metrics.metrics()), 'leader_election_master_status').type).toBe('gauge');
    expect(await status()).toBe(0);
    leading.next(true);
    expect(await status()).toBe(1);
    leading.next(false);
    expect(await status()).toBe(0);
    leading.next(true);
    leading.complete();
    expect(await status()).toBe(0);
    expect(() => metrics.addLeaderElection('my-controller', new BehaviorSubject(true))).toThrow(/already exported/);
    remove();
    expect(await status()).toBeUndefined();

    const again = new BehaviorSubject(true);
    const removeAgain = metrics.addLeaderElection('my-controller', again);
    expect(await status()).toBe(1);
    expect(again.observed).toBe(true);
    removeAgain();
    expect(again.observed).toBe(false);
  });

  it('reports a stream that fails and reads 0 from then on', async () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    const metrics = prometheusMetrics();
    const leading = new BehaviorSubject(true);
    metrics.addLeaderElection('x', leading);
    leading.error(new Error('lease lost'));
    expect(valueOf(parseExposition(await metrics.metrics()), 'leader_election_master_status', { name: 'x' })).toBe(0);
    expect(reported.map((e) => (e.cause as Error).message)).toEqual(['lease lost']);
  });
});

describe('prometheusMetrics: registry and arguments', () => {
  it('shares a registry with your own metrics, and refuses a second exporter on one registry', async () => {
    const registry = new Registry();
    const mine = new Counter({ name: 'my_requests_total', help: 'Requests.', registers: [registry] });
    mine.inc(3);
    const metrics = prometheusMetrics({ registry });
    expect(metrics.registry).toBe(registry);
    expect(metrics.contentType).toBe(registry.contentType);
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const f = parseExposition(await metrics.metrics());
    expect(valueOf(f, 'my_requests_total', {})).toBe(3);
    expect(f.has('workqueue_depth')).toBe(true);
    expect(() => prometheusMetrics({ registry })).toThrow(/already has a metric named workqueue_depth/);
    // registry.resetMetrics() resets yours and leaves rxkube's, which live in the library.
    const q = workQueue<string>({ name: 'q' });
    metrics.addWorkQueue(q);
    q.add('x');
    registry.resetMetrics();
    expect(valueOf(parseExposition(await metrics.metrics()), 'workqueue_adds_total', { name: 'q' })).toBe(1);
    q.shutDown();
  });

  it('makes a registry of its own by default, so two exporters never collide', async () => {
    const a = prometheusMetrics();
    const b = prometheusMetrics();
    expect(a.registry).not.toBe(b.registry);
    expect(a.registry).toBeInstanceOf(Registry);
  });

  it.each([
    ['opts', () => prometheusMetrics(null as never), /opts must be an object, got null/],
    ['registry', () => prometheusMetrics({ registry: {} as never }), /registry must be a prom-client Registry, got \{\}/],
    ['registry', () => prometheusMetrics({ registry: 'default' as never }), /registry must be a prom-client Registry, got "default"/],
  ])('throws a TypeError naming %s', (_, make, message) => {
    expect(make).toThrow(TypeError);
    expect(make).toThrow(message);
  });

  it('checks what is added: an object with a non-empty name and status() (a work queue: metrics()), an Observable for leadership', () => {
    const metrics = prometheusMetrics();
    expect(() => metrics.addController(undefined as never)).toThrow(/controller must be an object with a name and status\(\), got undefined/);
    // A controller's metrics are in its status(): the one status shape (LT-62).
    expect(() => metrics.addController({ name: 'c', metrics: () => ({}) } as never)).toThrow(/controller must be an object with a name and status\(\)/);
    expect(() => metrics.addWorkQueue({ name: 'q' } as never)).toThrow(/work queue must be an object with a name and metrics\(\)/);
    expect(() => metrics.addWorkQueue({ name: '', metrics: () => ({}) } as never)).toThrow(/work queue\.name must be a non-empty string, got ""/);
    expect(() => metrics.addInformer({ name: 7, status: () => ({}) } as never)).toThrow(/informer\.name must be a non-empty string, got 7/);
    // An informer's counters are in its status(): the one status shape (LT-85).
    expect(() => metrics.addInformer({ name: 'pods', metrics: () => ({}) } as never)).toThrow(/informer must be an object with a name and status\(\)/);
    expect(() => metrics.addLeaderElection('', new Subject())).toThrow(/leader election name must be a non-empty string/);
    expect(() => metrics.addLeaderElection('x', true as never)).toThrow(/leading must be an Observable<boolean>, got true/);
    for (const bad of [() => metrics.addController(undefined as never), () => metrics.addLeaderElection('x', true as never)]) expect(bad).toThrow(TypeError);
  });

  it('a source whose metrics() throws is reported and left out of that scrape; the others are still there', async () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    const metrics = prometheusMetrics();
    let fail = true;
    const good = workQueue<string>({ name: 'good' });
    metrics.addWorkQueue(good);
    metrics.addWorkQueue({
      name: 'flaky',
      metrics: () => {
        if (fail) throw new Error('snapshot failed');
        return good.metrics();
      },
    });
    const f = parseExposition(await metrics.metrics());
    expect(valueOf(f, 'workqueue_depth', { name: 'good' })).toBe(0);
    expect(valueOf(f, 'workqueue_depth', { name: 'flaky' })).toBeUndefined();
    expect(reported.length).toBeGreaterThan(0);
    expect(reported[0]?.message).toMatch(/metrics\(\) of work queue "flaky" threw.*snapshot failed/);
    // A controller is read through its status(), and named so when that throws.
    const removeBroken = metrics.addController({
      name: 'broken',
      status: () => {
        throw new Error('status failed');
      },
    } as never);
    await metrics.metrics();
    expect(reported.at(-1)?.message).toMatch(/status\(\) of controller "broken" threw.*status failed/);
    removeBroken();
    fail = false;
    expect(valueOf(parseExposition(await metrics.metrics()), 'workqueue_depth', { name: 'flaky' })).toBe(0);
    good.shutDown();
  });

  it("writes bucket bounds as Go's client does, so dashboards selecting le by string still match", () => {
    expect([1e-8, 1e-5, 0.0001, 0.005, 0.25, 1, 60, 1000, 123456, 1e6, 1.5e7, Infinity].map(formatBound)).toEqual([
      '1e-08',
      '1e-05',
      '0.0001',
      '0.005',
      '0.25',
      '1',
      '60',
      '1000',
      '123456',
      '1e+06',
      '1.5e+07',
      '+Inf',
    ]);
  });
});
