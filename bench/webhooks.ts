// Admission webhooks: what rxkube's webhook server costs over a bare `node:https` handler, and what a webhook adds
// to a create on a real kube-apiserver.
//
//   npm run bench -- webhooks
//   BENCH_WEBHOOK_ROUNDS=7 BENCH_WEBHOOK_SECONDS=20 BENCH_WEBHOOK_CREATES=400 npm run bench -- webhooks
//
// 1. Server against server. Each round starts both servers, one after the other and in alternating order, each in
//    a fresh process of its own (bench/webhookServer.ts) with the same certificate (a CA and a serving certificate
//    for 127.0.0.1 made with openssl): rxkube's runner serving an admission.validating and an admission.mutating
//    webhook for ConfigMaps (with prometheusMetrics recording them, as an operator runs it), and a bare
//    `node:https` server answering the same two paths by hand with the same validation and the same rfc6902 patch
//    (bench/lib/admissionWork.ts), with no limits, metrics, deadlines or certificate reloading. This process sends
//    AdmissionReview requests of a 1 KiB ConfigMap over TLS with keep-alive, alternating the two paths, after a
//    warm-up of 2 s at the fixed rate (TLS sessions, the JIT, the client's sockets):
//    - at a fixed rate (BENCH_WEBHOOK_RATE, 1,000/s) for BENCH_WEBHOOK_SECONDS (10 s), open loop: each request
//      leaves at its scheduled time and its latency runs from then, so a server that falls behind is charged for
//      the queue it causes: p50 and p99 per round;
//    - then closed loop with 32 in flight for the same time: the most requests per second each answers.
//    A ratio row is the median of the per-round ratios rxkube / bare, with [min–max] over the rounds.
// 2. The added latency a real kube-apiserver sees. The e2e tier's etcd and kube-apiserver (spec/e2e/build.sh)
//    with rxkube's server registered by a ValidatingWebhookConfiguration and a MutatingWebhookConfiguration (a
//    `url` client config on 127.0.0.1 and the CA bundle) whose namespaceSelector matches one namespace only.
//    BENCH_WEBHOOK_CREATES ConfigMaps are created one at a time, alternating between that namespace (both
//    webhooks called) and another (neither called), so both see the same server at the same moment: create
//    latency p50/p99 of each, and the difference per round.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { objectClient } from 'rxkube';
import { startCluster } from '../spec/e2e/cluster.js';
import { issueServingPair, makeCa, writeCertDir } from '../spec/e2e/servingCerts.js';
import { fixedRate, saturate, type LoadResult, type Target } from './lib/admissionLoad.js';
import { MANAGED_BY, MUTATE_PATH, sampleConfigMap, VALIDATE_PATH } from './lib/admissionWork.js';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { Child } from './lib/ipc.js';
import { row, type Row } from './lib/report.js';
import { percentile, summarize } from './lib/stats.js';
import type { WebhookServerArgs, WebhookServerReply } from './webhookServer.js';
import { locateBinaries } from './lib/e2eBinaries.js';

const SERVERS = ['rxkube', 'bare'] as const;
type ServerKind = (typeof SERVERS)[number];

/** What one server gave in one round. */
interface Sample {
  readonly p50: number;
  readonly p99: number;
  readonly rate: number;
  readonly maxPerSecond: number;
  /** Requests not answered 200 in the round (both loops). */
  readonly failed: number;
}

/** Starts one server in its own process; the caller closes it. */
async function startServer(kind: ServerKind, certDir: string): Promise<{ child: Child; port: number }> {
  const child = new Child(new URL('./webhookServer.js', import.meta.url), [], []);
  try {
    const { port } = await child.request<WebhookServerReply>('start', { kind, certDir } satisfies WebhookServerArgs, 60_000);
    return { child, port };
  } catch (e) {
    await child.close();
    throw e;
  }
}

/**
 * Says what failed when a server answered anything but 200 (a status, or a connection error's code), so a run on a
 * loaded machine still reports its figures beside the failures rather than none at all; the rows count them.
 */
function checked(ctx: Context, kind: ServerKind, what: string, r: LoadResult): LoadResult {
  if (r.errors > 0) ctx.log(`webhooks: ${kind} failed ${r.errors} of ${r.latencies.length} requests (${what}): ${JSON.stringify(r.failures)}`);
  return r;
}

/** Part 1: both servers, rounds interleaved. */
async function serverAgainstServer(ctx: Context, certDir: string, ca: string): Promise<Row[]> {
  const rounds = envNumber('BENCH_WEBHOOK_ROUNDS', ctx.repeats === 1 ? 1 : 5);
  const seconds = envNumber('BENCH_WEBHOOK_SECONDS', 10) * ctx.scale;
  const rate = envNumber('BENCH_WEBHOOK_RATE', 1000);
  const durationMs = Math.max(1000, seconds * 1000);
  const samples = new Map<ServerKind, Sample[]>(SERVERS.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    // Alternating which goes first, so neither always meets a warmer or a cooler machine.
    for (const kind of r % 2 === 0 ? SERVERS : [...SERVERS].reverse()) {
      const { child, port } = await startServer(kind, certDir);
      try {
        const target: Target = { port, ca };
        // Warm up: TLS sessions, the JIT, the agent's sockets.
        checked(ctx, kind, 'warm-up', await fixedRate(target, rate, Math.min(2000, durationMs)));
        const fixed = checked(ctx, kind, `${rate}/s`, await fixedRate(target, rate, durationMs));
        const sorted = [...fixed.latencies].sort((a, b) => a - b);
        const max = checked(ctx, kind, '32 in flight', await saturate(target, 32, durationMs));
        const sample: Sample = { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), rate: fixed.perSecond, maxPerSecond: max.perSecond, failed: fixed.errors + max.errors };
        samples.get(kind)?.push(sample);
        ctx.log(`webhooks: round ${r + 1} ${kind}: at ${sample.rate.toFixed(0)}/s p50 ${sample.p50.toFixed(3)} ms p99 ${sample.p99.toFixed(3)} ms; ${sample.maxPerSecond.toFixed(0)}/s with 32 in flight`);
      } finally {
        await child.request('stop', {}, 30_000).catch(() => undefined);
        await child.close();
      }
    }
  }
  const bench = `webhooks: server (${rounds} rounds)`;
  const rows: Row[] = [];
  const metrics: readonly [keyof Sample, string, string][] = [
    ['rate', `requests/s sent at ${rate}/s (${(durationMs / 1000).toFixed(0)} s)`, 'req/s'],
    ['p50', `latency p50 at ${rate}/s`, 'ms'],
    ['p99', `latency p99 at ${rate}/s`, 'ms'],
    ['maxPerSecond', 'requests/s, 32 in flight', 'req/s'],
  ];
  for (const kind of SERVERS) rows.push(row(bench, kind, 'requests not answered 200 per round', 'n', summarize((samples.get(kind) ?? []).map((s) => s.failed))));
  for (const [key, metric, unit] of metrics) {
    for (const kind of SERVERS) rows.push(row(bench, kind, metric, unit, summarize((samples.get(kind) ?? []).map((s) => s[key]))));
    const rx = samples.get('rxkube') ?? [];
    const bare = samples.get('bare') ?? [];
    rows.push(row(bench, 'rxkube / bare', metric, 'x', summarize(rx.map((s, i) => s[key] / (bare[i] as Sample)[key])), 'per-round ratio; p50 is the median, min–max the spread'));
  }
  return rows;
}

/** Part 2: creates on a real kube-apiserver, through both webhooks or neither. */
async function apiServerCreates(ctx: Context, certDir: string, ca: string): Promise<Row[]> {
  const creates = ctx.scaled(envNumber('BENCH_WEBHOOK_CREATES', 400), 20);
  const rounds = envNumber('BENCH_WEBHOOK_ROUNDS', ctx.repeats === 1 ? 1 : 5);
  locateBinaries();
  ctx.log('webhooks: starting etcd and kube-apiserver');
  const cluster = await startCluster();
  const { child, port } = await startServer('rxkube', certDir);
  try {
    const kc = cluster.kubeConfig;
    const namespaces = objectClient(kc, 'v1/namespaces');
    await namespaces.create({ metadata: { name: 'hooked', labels: { 'bench.rxkube.dev/webhooks': 'on' } } });
    await namespaces.create({ metadata: { name: 'plain' } });
    const hook = (path: string): Record<string, unknown> => ({
      name: `${path.slice(1, path.indexOf('-'))}.bench.rxkube.dev`,
      clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle: Buffer.from(ca).toString('base64') },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'], scope: 'Namespaced' }],
      namespaceSelector: { matchLabels: { 'bench.rxkube.dev/webhooks': 'on' } },
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
    });
    await objectClient(kc, 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations').create({ metadata: { name: 'bench' }, webhooks: [hook(VALIDATE_PATH)] } as never);
    await objectClient(kc, 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations').create({ metadata: { name: 'bench' }, webhooks: [hook(MUTATE_PATH)] } as never);
    const hooked = objectClient(kc, 'v1/configmaps', { namespace: 'hooked' });
    const plain = objectClient(kc, 'v1/configmaps', { namespace: 'plain' });
    // The server picks the configurations up from its own informer: wait until a create is defaulted.
    for (let i = 0; ; i++) {
      const cm = await hooked.create({ ...sampleConfigMap(i), metadata: { name: `probe-${i}` } } as never);
      if ((cm as V1ConfigMap).metadata?.labels?.[MANAGED_BY] === 'bench') break;
      if (i > 600) throw new Error('webhooks: the API server never called the mutating webhook');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const latency: Record<'hooked' | 'plain', number[][]> = { hooked: [], plain: [] };
    for (let r = 0; r < rounds; r++) {
      const round = { hooked: [] as number[], plain: [] as number[] };
      for (let i = 0; i < creates; i++) {
        for (const [name, client] of (i % 2 === 0 ? [['hooked', hooked], ['plain', plain]] : [['plain', plain], ['hooked', hooked]]) as [keyof typeof round, typeof hooked][]) {
          const cm = sampleConfigMap(i, 3);
          const t0 = performance.now();
          await client.create({ ...cm, metadata: { name: `r${r}-${i}` } } as never);
          round[name].push(performance.now() - t0);
        }
      }
      latency.hooked.push(round.hooked.sort((a, b) => a - b));
      latency.plain.push(round.plain.sort((a, b) => a - b));
      ctx.log(`webhooks: round ${r + 1}: create p50 ${percentile(round.hooked, 0.5).toFixed(2)} ms through the webhooks, ${percentile(round.plain, 0.5).toFixed(2)} ms without`);
    }
    const bench = `webhooks: kube-apiserver (${creates} creates × ${rounds})`;
    const rows: Row[] = [];
    for (const [p, label] of [[0.5, 'p50'], [0.99, 'p99']] as const) {
      const of = (name: 'hooked' | 'plain'): number[] => latency[name].map((s) => percentile(s, p));
      rows.push(row(bench, 'validating + mutating', `create latency ${label}`, 'ms', summarize(of('hooked'))));
      rows.push(row(bench, 'no webhook', `create latency ${label}`, 'ms', summarize(of('plain'))));
      rows.push(row(bench, 'added by the webhooks', `create latency ${label}`, 'ms', summarize(of('hooked').map((h, i) => h - (of('plain')[i] as number))), 'per-round difference; p50 is the median, min–max the spread'));
    }
    return rows;
  } finally {
    await child.request('stop', {}, 30_000).catch(() => undefined);
    await child.close();
    await cluster.stop();
  }
}

export const webhooks: Benchmark = {
  name: 'webhooks',
  description: "rxkube's webhook server against a bare node:https handler over TLS (latency at a fixed rate, throughput), and the latency webhooks add to a create on a real kube-apiserver",
  async run(ctx: Context): Promise<Row[]> {
    const certDir = mkdtempSync(join(tmpdir(), 'rxkube-bench-webhooks-'));
    try {
      const ca = await makeCa('rxkube-bench-webhooks-ca');
      await writeCertDir(certDir, await issueServingPair(ca));
      return [...(await serverAgainstServer(ctx, certDir, ca.certPem)), ...(await apiServerCreates(ctx, certDir, ca.certPem))];
    } finally {
      rmSync(certDir, { recursive: true, force: true });
    }
  },
};
