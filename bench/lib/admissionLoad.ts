// The load `npm run bench -- webhooks` puts on a webhook server: AdmissionReview POSTs over TLS with keep-alive,
// alternating the validating and the mutating path, either open-loop at a fixed rate (latency) or closed-loop with
// a fixed number in flight (throughput).

import { Agent, request } from 'node:https';
import { admissionRequestBody, MUTATE_PATH, sampleConfigMap, VALIDATE_PATH } from './admissionWork.js';

/** Where the server is and how to trust it. */
export interface Target {
  readonly port: number;
  /** The CA that signed the server's certificate (PEM). */
  readonly ca: string;
}

/** What one load run measured. */
export interface LoadResult {
  /** Completed requests per second over the run. */
  readonly perSecond: number;
  /** Each request's latency in ms, in completion order. */
  readonly latencies: number[];
  /** Requests answered with anything but 200, or failed. */
  readonly errors: number;
  /** The failed requests by what happened: the HTTP status, or the connection error's code (ECONNRESET, …). */
  readonly failures: Readonly<Record<string, number>>;
}

/** A request's outcome: 200, another status, or a connection error's code. */
type Outcome = number | string;

function tally(failures: Record<string, number>, outcome: Outcome): boolean {
  if (outcome === 200) return false;
  failures[String(outcome)] = (failures[String(outcome)] ?? 0) + 1;
  return true;
}

/** Prebuilt request bodies, so building them costs nothing during the measurement; path alternates. */
function bodies(n: number): { path: string; body: Buffer }[] {
  return Array.from({ length: n }, (_, i) => ({ path: i % 2 === 0 ? VALIDATE_PATH : MUTATE_PATH, body: Buffer.from(admissionRequestBody(i, sampleConfigMap(i))) }));
}

/** One POST; resolves with the status (a connection error's code instead) once the whole response has arrived. */
function post(agent: Agent, target: Target, path: string, body: Buffer): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port: target.port, servername: 'localhost', path, method: 'POST', agent, ca: target.ca, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'response error'));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'request error'));
    req.end(body);
  });
}

/**
 * Sends `rate` requests per second for `durationMs`, each at its scheduled time whether or not earlier ones have been
 * answered (open loop), and times each from its scheduled time, so a server that falls behind is charged for the
 * queue it causes rather than slowing the load down (no coordinated omission).
 */
export async function fixedRate(target: Target, rate: number, durationMs: number): Promise<LoadResult> {
  const total = Math.max(1, Math.round((rate * durationMs) / 1000));
  const prepared = bodies(Math.min(total, 2000));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  let errors = 0;
  const failures: Record<string, number> = {};
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  try {
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait - 1));
      while (performance.now() < due) await new Promise((resolve) => setImmediate(resolve));
      const { path, body } = prepared[i % prepared.length]!;
      inFlight.push(
        post(agent, target, path, body).then((status) => {
          latencies.push(performance.now() - due);
          if (tally(failures, status)) errors++;
        }),
      );
    }
    await Promise.all(inFlight);
    return { perSecond: total / ((performance.now() - start) / 1000), latencies, errors, failures };
  } finally {
    agent.destroy();
  }
}

/** Keeps `concurrency` requests in flight for `durationMs` (closed loop): the most the server answers per second. */
export async function saturate(target: Target, concurrency: number, durationMs: number): Promise<LoadResult> {
  const prepared = bodies(2000);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  const failures: Record<string, number> = {};
  let next = 0;
  const start = performance.now();
  const end = start + durationMs;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const { path, body } = prepared[next++ % prepared.length]!;
          const t0 = performance.now();
          const status = await post(agent, target, path, body);
          latencies.push(performance.now() - t0);
          if (tally(failures, status)) errors++;
        }
      }),
    );
    return { perSecond: latencies.length / ((performance.now() - start) / 1000), latencies, errors, failures };
  } finally {
    agent.destroy();
  }
}
