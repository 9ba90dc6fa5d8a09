import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAlreadyExists } from '../../src/errors/api/index.js';
import { objectClient } from '../../src/client/objectClient.js';
import { writeLog } from '../../src/client/writeLog.js';
import { controller, type Controller } from '../../src/controller/controller.js';
import { ReadYourWritesTimeoutError } from '../../src/controller/ReadYourWritesTimeoutError.js';
import type { ControllerOptions, ReconcileOutcome } from '../../src/controller/types.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { KubeObject } from '../../src/store/types.js';
import { startApiServer, type ApiServer, type WatchDelay } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

type ConfigMap = V1ConfigMap & KubeObject;
type Secret = V1Secret & KubeObject;

let server: ApiServer;
const subscriptions: Subscription[] = [];
const controllers: Controller<ConfigMap>[] = [];
const holds: WatchDelay[] = [];

beforeEach(async () => {
  server = await startApiServer();
  await server.create('v1/configmaps', { metadata: { name: 'x', namespace: 'default' }, data: { n: '0' } });
});
afterEach(async () => {
  for (const h of holds.splice(0)) h.release();
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await server.close();
  writeLog.reset();
});

interface Run {
  readonly ctl: Controller<ConfigMap>;
  readonly outcomes: ReconcileOutcome<ConfigMap>[];
  readonly errors: Error[];
}

function run(opts: Omit<ControllerOptions<ConfigMap>, 'for'> & { for?: Informer<ConfigMap> }): Run {
  const outcomes: ReconcileOutcome<ConfigMap>[] = [];
  const errors: Error[] = [];
  const ctl = controller<ConfigMap>({ for: informer(kubeSource(server.kubeConfig(), 'v1/configmaps')), onError: (e) => errors.push(e), ...opts });
  controllers.push(ctl);
  subscriptions.push(ctl.subscribe((o) => outcomes.push(o)));
  return { ctl, outcomes, errors };
}

/** Holds the watches of `resource` from now on, as a watch cache behind etcd would. */
function hold(resource: string): WatchDelay {
  const h = server.faults.delayWatches({ resource });
  holds.push(h);
  return h;
}

const configMaps = () => objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
const rvOf = (o: KubeObject | undefined) => o?.metadata?.resourceVersion;

/**
 * A reconcile that writes its object on the first call, while the configmaps watch is held, and asks to run again
 * at once: the second call is the one that would read the cache from before its own write. Only the first call
 * writes, so no later reconcile has a write of its own to wait for and the wait count stays exact. `written` gets
 * that write's resourceVersion.
 */
function writeThenRequeue(read: (string | undefined)[], written: (string | undefined)[]) {
  return async (cm: ConfigMap): Promise<{ requeueAfter: number } | undefined> => {
    read.push(rvOf(cm));
    if (read.length > 1) return undefined;
    hold('v1/configmaps');
    written.push(rvOf(await configMaps().patch('x', { data: { n: '1' } })));
    return { requeueAfter: 0 };
  };
}

describe('read your own writes (RYW-1)', () => {
  it('a reconcile right after a write waits for the cache to show it, and reads the written version', async () => {
    const read: (string | undefined)[] = [];
    const written: (string | undefined)[] = [];
    const r = run({ reconcile: writeThenRequeue(read, written) });
    // The second reconcile has been taken from the queue: without the wait it would have read its object by now.
    await waitFor(() => r.outcomes.length === 1 && r.ctl.status().inFlight === 1, 'the second reconcile to start');
    expect(read).toHaveLength(1);
    for (const h of holds) h.release();
    await waitFor(() => read.length >= 2, 'the second reconcile to read');
    expect(read[1]).toBe(written[0]);
    expect(read[1]).not.toBe(read[0]);
    expect(r.errors).toEqual([]);
    expect(r.ctl.status()).toMatchObject({ readYourWritesWaits: 1, readYourWritesTimeouts: 0 });
  });

  it('turned off, the same reconcile reads the stale object from before its write', async () => {
    const read: (string | undefined)[] = [];
    const written: (string | undefined)[] = [];
    run({ readYourWrites: false, reconcile: writeThenRequeue(read, written) });
    await waitFor(() => read.length >= 2, 'the second reconcile to read');
    expect(read[1]).toBe(read[0]);
    expect(Number(written[0])).toBeGreaterThan(Number(read[1]));
  });

  it('waits for the other sources to show writes to their resource: a secret just created is not created again', async () => {
    const secrets = informer<Secret>(kubeSource(server.kubeConfig(), 'v1/secrets'));
    const found: boolean[] = [];
    let recreated = 0;
    const reconcile = async (): Promise<{ requeueAfter: number } | undefined> => {
      const have = secrets.store.getByKey('default/x-secret') !== undefined;
      found.push(have);
      if (have || found.length > 2) return undefined;
      hold('v1/secrets');
      try {
        await objectClient(server.kubeConfig(), 'v1/secrets', { namespace: 'default' }).create({ metadata: { name: 'x-secret' } });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        recreated++;
      }
      return { requeueAfter: 0 };
    };
    const r = run({ watches: [{ source: secrets, map: () => 'default/x' }], reconcile });
    await waitFor(() => r.outcomes.length === 1 && r.ctl.status().inFlight === 1, 'the second reconcile to start');
    expect(found).toEqual([false]);
    for (const h of holds) h.release();
    await waitFor(() => found.length >= 2, 'the second reconcile');
    // (The secret's own event may have queued a third one by now.)
    expect(found.slice(0, 2)).toEqual([false, true]);
    expect(recreated).toBe(0);
  });
});

describe('the wait is bounded (RYW-6)', () => {
  it('gives up after readYourWritesTimeoutMs, reads the cache anyway, and reports it once per 30 s', async () => {
    const read: (string | undefined)[] = [];
    const reconcile = async (cm: ConfigMap): Promise<{ requeueAfter: number } | undefined> => {
      read.push(rvOf(cm));
      if (read.length === 1) hold('v1/configmaps');
      if (read.length > 3) return undefined;
      await configMaps().patch('x', { data: { n: String(read.length) } });
      return { requeueAfter: 0 };
    };
    const r = run({ readYourWritesTimeoutMs: 50, reconcile });
    await waitFor(() => read.length >= 4, 'three timed-out waits');
    // The watch never caught up: every reconcile read the version from before the first write.
    expect(new Set(read).size).toBe(1);
    expect(r.errors).toHaveLength(1);
    // Every wait is counted, although only the first was reported.
    expect(r.ctl.status()).toMatchObject({ readYourWritesWaits: 3, readYourWritesTimeouts: 3 });
    // Typed, so a handler can tell a lagging cache from a failed write.
    expect(r.errors[0]).toBeInstanceOf(ReadYourWritesTimeoutError);
    expect(r.errors[0]).toMatchObject({ key: 'default/x', cache: 'v1/configmaps', timeoutMs: 50, resourceVersion: expect.stringMatching(/^\d+$/) });
    expect(r.errors[0]?.message).toMatch(/^v1\/configmaps: the cache of v1\/configmaps \(at resourceVersion "\d+"\) still did not show this process's write of default\/x at resourceVersion \d+ after 50 ms \(readYourWritesTimeoutMs\); reconciling default\/x from it anyway$/);
  });

  it('never holds up shutdown: the reconcile signal ends the wait, and the reconcile it held back never starts', async () => {
    let calls = 0;
    const reconcile = async (): Promise<{ requeueAfter: number } | undefined> => {
      calls++;
      if (calls > 1) return undefined;
      hold('v1/configmaps');
      await configMaps().patch('x', { data: { n: '1' } });
      return { requeueAfter: 0 };
    };
    const r = run({ readYourWritesTimeoutMs: 600_000, shutdownTimeoutMs: 50, reconcile });
    await waitFor(() => r.outcomes.length === 1 && r.ctl.status().inFlight === 1, 'the second reconcile to wait');
    await r.ctl.shutdown();
    expect(r.errors.map((e) => e.message)).toEqual([expect.stringMatching(/1 reconcile\(s\) still running 50 ms after shutdown began \(default\/x\)/)]);
    await waitFor(() => r.ctl.status().inFlight === 0, 'the waiting key to be let go');
    expect(calls).toBe(1);
  });
});

describe('read-your-writes options', () => {
  it.each([
    [{ readYourWrites: 'yes' }, 'controller: option "readYourWrites" must be a boolean, got "yes"'],
    [{ readYourWritesTimeoutMs: -1 }, 'controller: option "readYourWritesTimeoutMs" must be a finite number >= 0, got -1'],
    [{ readYourWritesTimeoutMs: Infinity }, 'controller: option "readYourWritesTimeoutMs" must be a finite number >= 0, got Infinity'],
  ])('refuses %j', (opts, message) => {
    const source = informer(kubeSource(server.kubeConfig(), 'v1/configmaps'));
    expect(() => controller({ for: source, reconcile: () => undefined, ...(opts as object) })).toThrow(new TypeError(message));
  });
});
