/**
 * A real Prometheus server (Debian's `prometheus` package, installed by spec/e2e/prometheus.sh) that
 * scrapes one target every second, so an e2e spec can show that what a program serves on /metrics is
 * scraped and queryable as the dashboards of Go controllers query it. It listens on loopback only and
 * keeps its data in a temporary folder that stop() removes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../helpers/waitFor.js';

/** One sample of an instant query: its labels and value. */
export interface QuerySample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface PrometheusServer {
  /** The server's own address, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Evaluates a PromQL expression now. */
  query(expr: string): Promise<QuerySample[]>;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

/** The prometheus binary, or undefined when spec/e2e/prometheus.sh has not installed it. */
export function prometheusPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts Prometheus scraping `target` (`host:port`, path /metrics) under the job name `job`.
 * Resolves once its HTTP API answers.
 */
export async function startPrometheus(target: string, job: string): Promise<PrometheusServer> {
  const binary = prometheusPath();
  if (binary === undefined) throw new Error('prometheus is not installed: run bash spec/e2e/prometheus.sh (spec/e2e/build.sh does)');
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    ['global:', '  scrape_interval: 1s', '  scrape_timeout: 1s', 'scrape_configs:', `  - job_name: ${job}`, '    static_configs:', `      - targets: ['${target}']`, ''].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let log = '';
  const child: ChildProcess = spawn(
    binary,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (log += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${log}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
    }, 'the Prometheus server to be ready', 30_000, { everyMs: 50, describe: () => log });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    stop,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error ?? res.status}`);
      return (body.data?.result ?? []).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
  };
}
