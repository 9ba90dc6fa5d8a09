import http from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { LagMeter } from '../../bench/lib/liveness.js';
import { FaultSchedule } from '../../bench/lib/soakFaults.js';
import { Rng } from '../helpers/random.js';
import { waitFor } from '../helpers/waitFor.js';
import { FAULT_KINDS } from './faults.js';

// The soak's two judges of liveness: a lag that counts only healthy server time, and faults one at a time.

describe('the soak lag meter', () => {
  it('shows no lag for a store that follows within a sample', () => {
    const meter = new LagMeter(16);
    for (let i = 0; i < 10; i++) {
      // The server moved on by 25 writes since the last sample; the store has everything up to the last one.
      const lag = meter.sample(i * 250, { rv: 100 + 25 * (i + 1), unhealthyMs: 0 }, 100 + 25 * i + 20);
      expect(lag.ms).toBe(0);
    }
    expect(meter.worstHealthy.healthyMs).toBe(0);
  });

  it('counts the age of the oldest write a store that stands still has not seen', () => {
    const meter = new LagMeter(16);
    meter.sample(0, { rv: 100, unhealthyMs: 0 }, 100);
    meter.sample(1000, { rv: 150, unhealthyMs: 0 }, 100);
    const lag = meter.sample(31_000, { rv: 900, unhealthyMs: 0 }, 100);
    expect(lag).toEqual({ at: 31_000, ms: 30_000, healthyMs: 30_000, writes: 800 });
    expect(meter.worstHealthy).toEqual(lag);
  });

  it('leaves out the time a fault was armed or a restart under way, but keeps counting across faults', () => {
    const meter = new LagMeter(16);
    meter.sample(0, { rv: 150, unhealthyMs: 0 }, 100);
    // 10 s of faults during 40 s: 30 s of the lag were the store's own.
    const lag = meter.sample(40_000, { rv: 900, unhealthyMs: 10_000 }, 100);
    expect(lag.ms).toBe(40_000);
    expect(lag.healthyMs).toBe(30_000);
    // Caught up: the lag is gone, the worst stays.
    expect(meter.sample(41_000, { rv: 910, unhealthyMs: 10_000 }, 910).ms).toBe(0);
    expect(meter.worstHealthy.healthyMs).toBe(30_000);
    expect(meter.caughtUpAt(40_001, 900)).toBe(41_000);
    expect(meter.caughtUpAt(0, 1000)).toBeUndefined();
  });

  it('counts a fault that was withdrawn (cleared untaken) as healthy time', () => {
    const meter = new LagMeter(16);
    // Sampled while a fault was armed (counted provisionally), which was then cleared untaken.
    meter.sample(0, { rv: 150, unhealthyMs: 2000 }, 100);
    expect(meter.sample(40_000, { rv: 900, unhealthyMs: 0 }, 100).healthyMs).toBe(40_000);
  });
});

describe('the soak fault schedule', () => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('has one fault at a time, armed once, and clears an untaken one before the next', async () => {
    // No informer takes anything here, so every armed fault stays armed until the schedule clears it.
    const schedule = new FaultSchedule(server, new Rng(7), () => undefined, 60_000, () => Number(server.resourceVersion()));
    // The most one fault of the table arms with a single informer: one entry per verb it bites.
    const mostArmed = 2;
    for (let i = 0; i < 3 * FAULT_KINDS.length; i++) {
      schedule.next();
      expect(server.faults.pending()).toBeLessThanOrEqual(mostArmed);
      const open = schedule.records.filter((r) => r.takenAt === undefined && r.expiredAt === undefined);
      expect(open.length).toBeLessThanOrEqual(1);
      await schedule.listening();
    }
    await schedule.stop();
    expect(server.faults.pending()).toBe(0);
    const records = schedule.records;
    expect(records.length).toBeGreaterThan(FAULT_KINDS.length);
    for (const [i, r] of records.entries()) {
      const over = r.takenAt ?? r.expiredAt;
      expect(over, `${r.kind} ended`).toBeDefined();
      const next = records[i + 1];
      if (next !== undefined) expect(next.causedAt).toBeGreaterThanOrEqual(over as number);
    }
    expect(records.some((r) => r.expiredAt !== undefined)).toBe(true);
  });

  // A fault armed twice for one informer is half taken: the second firing waits for a request that never comes.
  it.each(FAULT_KINDS.filter((k) => k.name !== 'restart').map((k) => [k.name, k] as const))('%s, armed for one informer, is all taken by one list and one watch', async (_, kind) => {
    let n = 0;
    const touch = (): void => void server.create('v1/pods', { metadata: { name: `t${n++}`, namespace: 'default' } });
    await kind.cause({ server, rng: new Rng(1), informers: 1, touch });
    const opened: http.ClientRequest[] = [];
    const get = (query: string): void => {
      const req = http.get(`${server.url}/api/v1/pods?${query}`, (res) => res.resume());
      req.on('error', () => undefined);
      opened.push(req);
    };
    try {
      get('limit=500');
      get(`watch=true&resourceVersion=${server.resourceVersion()}`);
      // Stream faults fire on the watch's next event.
      await waitFor(() => {
        touch();
        return server.faults.pending() === 0;
      }, `every firing of ${kind.name} taken`, 5000, { describe: () => `${server.faults.pending()} still armed`, everyMs: 20 });
    } finally {
      for (const req of opened) req.destroy();
    }
  });

  it('counts an armed fault as unhealthy while it is armed, and withdraws it when it is cleared untaken', async () => {
    const schedule = new FaultSchedule(server, new Rng(3), () => undefined, 60_000, () => Number(server.resourceVersion()));
    expect(schedule.progress().unhealthyMs).toBe(0);
    // Cause faults until one stays armed (nothing takes it here); one that ends at once (or a restart) is let end.
    let before: number;
    for (;;) {
      before = schedule.progress().unhealthyMs;
      schedule.next();
      if (server.faults.pending() > 0) break;
      await schedule.stop();
    }
    expect(schedule.progress().unhealthyMs).toBeGreaterThanOrEqual(before);
    await schedule.stop();
    expect(schedule.records.at(-1)?.expiredAt).toBeDefined();
    expect(schedule.progress().unhealthyMs).toBe(before);
  });
});
