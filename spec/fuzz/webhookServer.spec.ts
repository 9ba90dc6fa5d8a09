/**
 * The webhook server fuzzed over TLS (WH-65): the seeded malformed requests of the probe and metrics fuzz
 * (HI-14), half of them turned into POSTs of JSON to a webhook's path so the body reading and the review are
 * reached as well as the parser's refusals. Nothing may escape to the process, each connection gets
 * well-formed HTTP or is closed, none a 5xx (the webhook always answers 200), and a normal review answers after.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Webhook } from '../../src/admission/types.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import { parseResponses, type RawEnding } from '../helpers/rawHttp.js';
import { trapUnhandled } from '../helpers/unhandled.js';
import { waitFor } from '../helpers/waitFor.js';
import { start, type Running } from '../manager/harness.js';
import { selfSignedPair } from '../manager/tlsFiles.js';
import { runs } from './fuzzKit.js';
import { malformedRequests, type RequestCase } from './httpRequests.js';

const escaped = trapUnhandled();
let pair: TlsPair;
let dir: string;
let running: Running;
let port: number;
const echo: Webhook = { type: 'validating', path: '/validate-echo', review: (body) => Promise.resolve({ status: 200, body: { echoed: body === undefined ? null : 'json' } }) };

beforeAll(async () => {
  pair = selfSignedPair('fuzz');
  dir = mkdtempSync(join(tmpdir(), 'rxkube-fuzz-certs-'));
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key);
  running = start({ controllers: [], webhooks: [echo], webhookBindAddress: '127.0.0.1:0', webhookCertDir: dir, healthProbeBindAddress: '0', serverLimits: { maxBodyBytes: 4_096 } });
  port = await waitFor(() => {
    const e = running.events.find((x) => x.type === 'serving');
    return e?.type === 'serving' && e.port;
  }, 'the webhook server');
});
afterAll(async () => {
  await running.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** sendRaw over TLS: the chunks as separate writes after the handshake, then the ending; what came back and whether it closed. */
function sendRawTls(chunks: readonly Buffer[], ending: RawEnding, timeoutMs = 20_000): Promise<{ received: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let settled = false;
    const socket = connect({ host: '127.0.0.1', port, ca: pair.cert });
    const done = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ received: Buffer.concat(parts), closed });
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('data', (b: Buffer) => parts.push(b));
    socket.on('error', () => undefined);
    socket.on('close', () => done(true));
    socket.once('secureConnect', () => {
      for (const c of chunks) socket.write(c);
      if (ending === 'end') socket.end();
      else if (ending === 'abort') done(true);
    });
  });
}

/** Half the cases aimed at the webhook: the first request line made a POST to its path, with a JSON content type and a body. */
function aimed(c: RequestCase, i: number): RequestCase {
  if (i % 2 === 1) return c;
  const text = Buffer.concat(c.chunks).toString('latin1');
  const turned = text.replace(/^[^ \r\n]* [^ \r\n]*/, 'POST /validate-echo').replace(/\r\n/, '\r\nContent-Type: application/json\r\n').replace(/\r\n\r\n/, '\r\nContent-Length: 2\r\n\r\n{}');
  return { ...c, chunks: [Buffer.from(turned, 'latin1')] };
}

describe('the webhook server under malformed requests over TLS', () => {
  it.each([1, 2])('seed %i: no crash, no 5xx, only HTTP or a close, and a review answers after', async (seed) => {
    const failures: string[] = [];
    const outcomes: Record<string, number> = {};
    const cases = malformedRequests(seed, runs(400)).map(aimed);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < cases.length; i = next++) {
        const c = cases[i] as RequestCase;
        const x = await sendRawTls(c.chunks, c.ending);
        if (c.ending === 'end' && !x.closed) failures.push(`${c.id}: neither answered and closed nor closed`);
        let statuses: number[] = [];
        try {
          statuses = parseResponses(x.received, 'guess').map((r) => r.status);
        } catch (err) {
          failures.push(`${c.id}: not HTTP: ${(err as Error).message}`);
        }
        const first = statuses.find((s) => s >= 200);
        const key = first === undefined ? 'closed' : String(first);
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        if (statuses.some((s) => s >= 500)) failures.push(`${c.id}: answered ${statuses.join(', ')}; sent ${JSON.stringify(Buffer.concat(c.chunks).toString('latin1').slice(0, 160))}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(failures.slice(0, 20)).toEqual([]);
    // The review was reached, and so were the refusals.
    expect(outcomes['200']).toBeGreaterThan(0);
    expect(outcomes['400']).toBeGreaterThan(0);
    const after = await sendRawTls([Buffer.from('POST /validate-echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}')], 'end');
    expect(parseResponses(after.received)[0]?.status).toBe(200);
    expect(escaped).toEqual([]);
  });
});
