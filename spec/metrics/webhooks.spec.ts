/**
 * The webhook server's metrics under controller-runtime's names, exported by prometheusMetrics() once the manager
 * hands it the server, and prom-client's process and Node.js metrics beside them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Webhook } from '../../src/admission/types.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { start, type Running } from '../manager/harness.js';
import { selfSignedPair } from '../manager/tlsFiles.js';
import { waitFor } from '../helpers/waitFor.js';
import { family, parseExposition, promtoolCheck, promtoolPath, valueOf } from './exposition.js';

let pair: TlsPair;
let dir: string | undefined;
let running: Running | undefined;

beforeAll(() => {
  pair = selfSignedPair('metrics');
});
afterEach(async () => {
  await running?.stop();
  running = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const LATENCY_BOUNDS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];

const ok: Webhook = { type: 'validating', path: '/validate-ok', review: () => Promise.resolve({ status: 200, body: { ok: true } }) };
const failing: Webhook = {
  type: 'mutating',
  path: '/mutate-failing',
  review: () => Promise.resolve({ status: 200, body: { response: { allowed: false } }, failure: 'threw' }),
};

function post(port: number, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { 'content-type': 'application/json' }, ca: pair.cert, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A manager serving `ok` and `failing`, its metrics through prometheusMetrics(opts); resolves the webhook port and a scrape. */
async function serve(defaultMetrics?: boolean, webhooks: readonly Webhook[] = [ok, failing]): Promise<{ port: number; scrape: () => Promise<string> }> {
  dir = mkdtempSync(join(tmpdir(), 'rxkube-certs-'));
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key);
  const metrics = prometheusMetrics(defaultMetrics === undefined ? {} : { defaultMetrics });
  running = start({
    controllers: [],
    webhooks,
    webhookBindAddress: '127.0.0.1:0',
    webhookCertDir: dir,
    healthProbeBindAddress: '0',
    metrics,
    metricsBindAddress: '127.0.0.1:0',
    serverLimits: { maxBodyBytes: 100 },
  });
  const r = running;
  const port = (server: 'webhooks' | 'metrics'): Promise<number> =>
    waitFor(() => {
      const e = r.events.find((x) => x.type === 'serving' && x.server === server);
      return e?.type === 'serving' && e.port;
    }, `the ${server} server`);
  const metricsPort = await port('metrics');
  return {
    port: await port('webhooks'),
    scrape: async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
  };
}

describe('webhook metrics', () => {
  it("count requests by webhook and code, latency in controller-runtime's buckets, in-flight, and handler failures", async () => {
    const { port, scrape } = await serve();
    expect(await post(port, '/validate-ok', '{}')).toBe(200);
    expect(await post(port, '/validate-ok', '{}')).toBe(200);
    expect(await post(port, '/validate-ok', JSON.stringify({ pad: 'x'.repeat(200) }))).toBe(413);
    expect(await post(port, '/mutate-failing', '{}')).toBe(200);
    expect(await post(port, '/elsewhere', '{}')).toBe(404);
    const text = await scrape();
    const f = parseExposition(text);
    const types = Object.fromEntries([...f.values()].filter((x) => /webhook/.test(x.name)).map((x) => [x.name, x.type]));
    expect(types).toEqual({
      controller_runtime_webhook_requests_total: 'counter',
      controller_runtime_webhook_latency_seconds: 'histogram',
      controller_runtime_webhook_requests_in_flight: 'gauge',
      rxkube_webhook_failures_total: 'counter',
    });
    expect(valueOf(f, 'controller_runtime_webhook_requests_total', { webhook: '/validate-ok', code: '200' })).toBe(2);
    expect(valueOf(f, 'controller_runtime_webhook_requests_total', { webhook: '/validate-ok', code: '413' })).toBe(1);
    expect(valueOf(f, 'controller_runtime_webhook_requests_total', { webhook: '/mutate-failing', code: '200' })).toBe(1);
    // A path nobody serves adds no series: a client cannot grow the families.
    expect(family(f, 'controller_runtime_webhook_requests_total').samples.map((s) => s.labels['webhook'])).not.toContain('/elsewhere');
    const buckets = family(f, 'controller_runtime_webhook_latency_seconds').samples.filter((s) => s.name.endsWith('_bucket') && s.labels['webhook'] === '/validate-ok');
    expect(buckets.map((s) => s.labels['le'])).toEqual(LATENCY_BOUNDS);
    expect(valueOf(f, 'controller_runtime_webhook_latency_seconds_count', { webhook: '/validate-ok' })).toBe(3);
    expect(valueOf(f, 'controller_runtime_webhook_requests_in_flight', { webhook: '/validate-ok' })).toBe(0);
    expect(valueOf(f, 'rxkube_webhook_failures_total', { webhook: '/mutate-failing', failure: 'threw' })).toBe(1);
    expect(valueOf(f, 'rxkube_webhook_failures_total', { webhook: '/validate-ok', failure: 'threw' })).toBeUndefined();
    // prom-client's defaults, as a Go controller's process_* and go_*.
    expect(family(f, 'process_cpu_user_seconds_total').type).toBe('counter');
    expect(family(f, 'nodejs_eventloop_lag_seconds').type).toBe('gauge');
    const promtool = promtoolPath();
    if (promtool !== undefined) {
      // Status 3 is lint findings only (1 would be text it cannot read); prom-client's own nodejs_active_*_total gauges
      // are the findings it has, and none may be about rxkube's families.
      const checked = promtoolCheck(promtool, text);
      expect([0, 3]).toContain(checked.status);
      expect(checked.output.split('\n').filter((line) => line !== '' && !line.startsWith('nodejs_active_'))).toEqual([]);
    }
  });

  it('show a request in flight while its webhook answers', async () => {
    let release: (() => void) | undefined;
    const started: boolean[] = [];
    const slow: Webhook = {
      type: 'validating',
      path: '/validate-slow',
      review: () => {
        started.push(true);
        return new Promise((resolve) => (release = () => resolve({ status: 200, body: {} })));
      },
    };
    const { port, scrape } = await serve(false, [slow]);
    const answered = post(port, '/validate-slow', '{}');
    await waitFor(() => started.length === 1, 'the review to start');
    expect(valueOf(parseExposition(await scrape()), 'controller_runtime_webhook_requests_in_flight', { webhook: '/validate-slow' })).toBe(1);
    release?.();
    expect(await answered).toBe(200);
    const f = parseExposition(await scrape());
    expect(valueOf(f, 'controller_runtime_webhook_requests_in_flight', { webhook: '/validate-slow' })).toBe(0);
    expect(valueOf(f, 'controller_runtime_webhook_requests_total', { webhook: '/validate-slow', code: '200' })).toBe(1);
  });

  it('leave the process and Node.js metrics out with defaultMetrics: false', async () => {
    const { scrape } = await serve(false);
    const f = parseExposition(await scrape());
    expect([...f.keys()].filter((n) => n.startsWith('process_') || n.startsWith('nodejs_'))).toEqual([]);
    expect(family(f, 'controller_runtime_webhook_requests_total').type).toBe('counter');
  });

  it('export one webhook server per exporter, and check what is added', () => {
    const metrics = prometheusMetrics({ defaultMetrics: false });
    metrics.addWebhooks({ metrics: () => ({ webhooks: [] }) });
    expect(() => metrics.addWebhooks({ metrics: () => ({ webhooks: [] }) })).toThrow(/a webhook server is already exported/);
    expect(() => metrics.addWebhooks({} as never)).toThrow(TypeError);
    expect(() => prometheusMetrics({ defaultMetrics: 'yes' as never })).toThrow(/option "defaultMetrics" must be a boolean/);
  });
});
