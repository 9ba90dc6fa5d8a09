/**
 * Fires seeded malformed requests (httpRequests.ts) over raw sockets at a running manager's probe and metrics
 * servers, and judges what came back: the process must not see an unhandled rejection or an uncaught
 * exception, each connection must get well-formed HTTP responses or be closed, none of them a 5xx (every route
 * is healthy, so a 5xx could only come from the request's form), and a normal probe and scrape must answer
 * afterwards. The suite runs a few thousand cases; `npm run chaos -- --servers <cases>` runs more.
 */
import { informer } from '../../src/informer/informer.js';
import { manager } from '../../src/manager/manager.js';
import type { ManagerEvent } from '../../src/manager/options.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer } from '../../src/testing/index.js';
import { parseResponses, sendRaw } from '../helpers/rawHttp.js';
import { waitFor } from '../helpers/waitFor.js';
import { malformedRequests, type RequestCase } from './httpRequests.js';

/** What a fuzz run found. */
export interface ServerFuzzReport {
  readonly cases: number;
  /** One line per failure (at most 20 cases named, then a count), each with the case's id to replay it. */
  readonly failures: string[];
  /** How the cases were answered: the status of the first response, or `closed` for none. */
  readonly outcomes: Readonly<Record<string, number>>;
}

/** Options of {@link fuzzServers}. */
export interface ServerFuzzOptions {
  readonly seed: number;
  readonly cases: number;
  /** Connections in flight at once. @default 16 */
  readonly concurrency?: number;
}

const NORMAL = 'Host: probe\r\nConnection: close\r\n\r\n';

/** Runs `cases` requests from `seed` against a manager of its own, on loopback, and reports what went wrong. */
export async function fuzzServers({ seed, cases, concurrency = 16 }: ServerFuzzOptions): Promise<ServerFuzzReport> {
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  const escaped: unknown[] = [];
  const trap = (err: unknown): void => void escaped.push(err);
  process.on('unhandledRejection', trap);
  process.on('uncaughtException', trap);
  const server = await startApiServer({ port: 0 });
  const stop = new AbortController();
  const events: ManagerEvent[] = [];
  let ended: string | undefined;
  try {
    const configMaps = informer(kubeSource(server.kubeConfig(), 'v1/configmaps'), { onError: () => undefined });
    manager({
      controllers: [],
      informers: [configMaps],
      healthProbeBindAddress: '127.0.0.1:0',
      metrics: { contentType: 'text/plain; version=0.0.4', metrics: async () => 'fuzz_up 1\n' },
      metricsBindAddress: '127.0.0.1:0',
      signal: stop.signal,
    }).subscribe({ next: (e) => events.push(e), complete: () => (ended = 'completed'), error: (err: unknown) => (ended = String(err)) });
    const port = (which: 'probes' | 'metrics'): Promise<number> =>
      waitFor(() => {
        const e = events.find((x) => x.type === 'serving' && x.server === which);
        return e?.type === 'serving' && e.port;
      }, `the ${which} server`);
    const ports = [await port('probes'), await port('metrics')] as const;
    const normal = async (p: number, path: string): Promise<number | undefined> => parseResponses((await sendRaw(p, [`GET ${path} HTTP/1.1\r\n${NORMAL}`], 'open')).received)[0]?.status;
    await waitFor(async () => (await normal(ports[0], '/readyz')) === 200, 'the informer to sync');

    const all = malformedRequests(seed, cases);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < all.length; i = next++) {
        const c = all[i] as RequestCase;
        const problem = await judge(c, ports[i % 2] as number, outcomes);
        if (problem !== undefined) failures.push(`${c.id} (${i % 2 === 0 ? 'probes' : 'metrics'}): ${problem}; sent ${JSON.stringify(Buffer.concat(c.chunks).toString('latin1').slice(0, 160))}`);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));

    for (const [p, path] of [[ports[0], '/healthz'], [ports[1], '/metrics']] as const) {
      const status = await normal(p, path);
      if (status !== 200) failures.push(`a normal GET ${path} after the fuzz answered ${String(status)}`);
    }
    if (ended !== undefined) failures.push(`the manager ended during the fuzz: ${ended}`);
  } finally {
    stop.abort();
    await waitFor(() => ended, 'the manager to stop').catch(() => undefined);
    await server.close();
    process.off('unhandledRejection', trap);
    process.off('uncaughtException', trap);
  }
  for (const err of escaped) failures.push(`escaped to the process: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  const shown = failures.slice(0, 20);
  if (failures.length > shown.length) shown.push(`… and ${failures.length - shown.length} more`);
  return { cases, failures: shown, outcomes };
}

/** What is wrong with how one case was answered, or undefined when nothing is. */
async function judge(c: RequestCase, port: number, outcomes: Record<string, number>): Promise<string | undefined> {
  const x = await sendRaw(port, c.chunks, c.ending, 20_000);
  if (c.ending === 'end' && !x.closed) return 'the connection was neither answered and closed nor closed within 20 s';
  let statuses: number[];
  try {
    statuses = parseResponses(x.received, 'guess').map((r) => r.status);
  } catch (err) {
    return `not HTTP: ${(err as Error).message}`;
  }
  const first = statuses.find((s) => s >= 200);
  const key = first === undefined ? 'closed' : String(first);
  outcomes[key] = (outcomes[key] ?? 0) + 1;
  const fivexx = statuses.filter((s) => s >= 500);
  return fivexx.length > 0 ? `answered ${fivexx.join(', ')}` : undefined;
}
