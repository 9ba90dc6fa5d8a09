import fc from 'fast-check';
import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
const open: WireWatch[] = [];

beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  for (const w of open.splice(0)) w.close();
  await server.close();
});

let seq = 0;
const create = () => server.create('v1/pods', { metadata: { name: `p${++seq}`, namespace: 'default' } });

async function watchNow(): Promise<WireWatch> {
  const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`);
  open.push(w);
  await waitFor(() => server.stats.watchesOpen >= 1, 'the watch to register', 5_000);
  return w;
}

async function errorCode(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'answered',
    (err: NodeJS.ErrnoException) => err.code ?? 'error',
  );
}

/**
 * Every fault a chaos suite draws from, as data: how to cause it and what a
 * client then observes, summed up in one word or two.
 */
const SCENARIOS: Record<string, () => Promise<string>> = {
  closeWatches: async () => {
    const w = await watchNow();
    server.faults.closeWatches();
    return `${await w.waitForEnd()} ${w.lines.length}`;
  },
  resetConnections: async () => {
    const w = await watchNow();
    server.faults.resetConnections();
    return await w.waitForEnd();
  },
  resetMidLine: async () => {
    const w = await watchNow();
    server.faults.inject({ type: 'resetMidLine' }, { verb: 'watch' });
    await create();
    return `${await w.waitForEnd()} ${w.raw.includes('\n') ? 'line' : 'partial'}`;
  },
  endMidLine: async () => {
    const w = await watchNow();
    server.faults.inject({ type: 'endMidLine' }, { verb: 'watch' });
    await create();
    return `${await w.waitForEnd()} ${w.raw.includes('\n') ? 'line' : 'partial'}`;
  },
  malformedLine: async () => {
    const w = await watchNow();
    server.faults.inject({ type: 'malformedLine' }, { verb: 'watch' });
    await create();
    await w.waitForLines(2);
    return w.lines.map((l) => ('malformed' in l ? 'garbage' : l.type)).join(',');
  },
  errorAtStart: async () => {
    server.faults.inject({ type: 'errorEvent' }, { verb: 'watch' });
    const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true`);
    open.push(w);
    await w.waitForEnd();
    return `${w.status} ${w.events.map((e) => `${e.type}:${e.object.code}`).join(',')}`;
  },
  errorMidStream: async () => {
    const w = await watchNow();
    await create();
    await w.waitForLines(1);
    server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch' });
    await create();
    await w.waitForEnd();
    return w.events.map((e) => (e.type === 'ERROR' ? `ERROR:${e.object.code}` : e.type)).join(',');
  },
  compaction: async () => {
    const from = server.resourceVersion();
    await create();
    server.compact();
    const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${from}`);
    open.push(w);
    await w.waitForEnd();
    return w.events.map((e) => `${e.type}:${e.object.code}:${e.object.reason}`).join(',');
  },
  tooManyRequests: async () => {
    server.faults.inject({ type: 'status', status: 429, retryAfterSeconds: 2 }, { verb: 'list' });
    const res = await request(`${server.url}/api/v1/pods`);
    return `${res.status} retry-after ${res.headers['retry-after']}`;
  },
  internalError: async () => {
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'watch' });
    return String((await request(`${server.url}/api/v1/pods?watch=true`)).status);
  },
  unavailable: async () => {
    server.faults.inject({ type: 'status', status: 503 }, { verb: 'list' });
    const res = await request(`${server.url}/api/v1/pods`);
    return `${res.status} retry-after ${res.headers['retry-after']}`;
  },
  stall: async () => {
    server.faults.inject({ type: 'stall' }, { verb: 'list' });
    const before = server.stats.requests;
    let answered = false;
    const url = new URL(`${server.url}/api/v1/pods`);
    const req = http.get({ hostname: url.hostname, port: url.port, path: url.pathname, agent: false }, () => (answered = true));
    const failed = errorCode(new Promise((_, reject) => req.on('error', reject)));
    await waitFor(() => server.stats.requests > before, 'the stalled request to arrive', 5_000);
    const served = (await request(`${server.url}/api/v1/pods`)).status;
    req.destroy(new Error('client gave up'));
    await failed;
    return `${answered ? 'answered' : 'silent'} others ${served}`;
  },
  silentWatch: async () => {
    server.faults.inject({ type: 'silentWatch' }, { verb: 'watch' });
    const quiet = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}&timeoutSeconds=1`);
    open.push(quiet);
    const control = await watchNow();
    await create();
    await control.waitForLines(1);
    return `${quiet.status} ${quiet.raw === '' && quiet.ending === undefined ? 'silent' : 'spoke'}`;
  },
  restart: async () => {
    const w = await watchNow();
    const back = server.restart({ downMs: 1_000 });
    // Asked at once: seeing the watch end first can take longer than the downtime on a loaded machine.
    const whileDown = errorCode(request(`${server.url}/api/v1/pods`));
    const ending = await w.waitForEnd();
    await back;
    return `${ending} ${await whileDown} ${(await request(`${server.url}/api/v1/pods`)).status}`;
  },
};

const EXPECTED: Record<string, string> = {
  closeWatches: 'end 0',
  resetConnections: 'error',
  resetMidLine: 'error partial',
  endMidLine: 'end partial',
  malformedLine: 'garbage,ADDED',
  errorAtStart: '200 ERROR:410',
  errorMidStream: 'ADDED,ERROR:410',
  compaction: 'ERROR:410:Expired',
  tooManyRequests: '429 retry-after 2',
  internalError: '500',
  unavailable: '503 retry-after 1',
  stall: 'silent others 200',
  silentWatch: '200 silent',
  restart: 'error ECONNREFUSED 200',
};

describe('chaos faults', () => {
  it('every fault can be drawn by seed-driven code and does what the chaos suite expects, in any order', async () => {
    const names = Object.keys(SCENARIOS);
    expect(names.sort()).toEqual(Object.keys(EXPECTED).sort());
    const orders = fc.sample(fc.shuffledSubarray(names, { minLength: names.length, maxLength: names.length }), { seed: 20261123, numRuns: 2 });
    for (const order of orders) {
      for (const name of order) {
        const scenario = SCENARIOS[name] as () => Promise<string>;
        expect(await scenario(), name).toBe(EXPECTED[name]);
        // Each scenario leaves nothing armed and nothing open behind it for the next one.
        server.faults.clear();
        for (const w of open.splice(0)) w.close();
        await waitFor(() => server.stats.watchesOpen === 0, 'the watches of the last scenario to close', 5_000);
      }
    }
  });
});
