/**
 * Read your own writes against a real kube-apiserver and etcd: resourceVersions are etcd revisions, a ConfigMap
 * deletion is answered with a Status (no resourceVersion, only the uid), and the informer's store follows the real
 * watch. The lag is made on the client side: the informer's source holds the watch events the real server sent
 * until the test lets them through, as a busy watch cache or a slow link would, while writes go straight to the
 * server. The held source passes the real source's identity on, as any wrapper must (RYW-2).
 */
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { objectClient } from '../../src/client/objectClient.js';
import { writeLog } from '../../src/client/writeLog.js';
import { controller, type Controller } from '../../src/controller/controller.js';
import type { ReconcileOutcome } from '../../src/controller/types.js';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher, WatchEvent } from '../../src/sources/types.js';
import type { KubeObject } from '../../src/store/types.js';
import { waitFor } from '../helpers/waitFor.js';
import { startCluster, type Cluster } from './cluster.js';

type ConfigMap = V1ConfigMap & KubeObject;

let cluster: Cluster;
let kc: KubeConfig;
let core: CoreV1Api;
let nsCount = 0;

beforeAll(async () => {
  cluster = await startCluster();
  kc = cluster.kubeConfig;
  core = kc.makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await cluster?.stop();
});

const controllers: Controller<ConfigMap>[] = [];
const subscriptions: Subscription[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  writeLog.reset();
});

/** A source whose watch events wait while `held` is on: the cache falls behind the server. */
function heldSource(namespace: string): { source: ListerWatcher<ConfigMap>; hold(): void; release(): void } {
  const real = kubeSource<ConfigMap>(kc, { version: 'v1', plural: 'configmaps' }, { namespace });
  let held = false;
  let released: () => void = () => {};
  let gate = Promise.resolve();
  return {
    source: {
      identity: real.identity,
      supportsWatchList: real.supportsWatchList,
      list: (opts, signal) => real.list(opts, signal),
      async *watch(opts, signal): AsyncGenerator<WatchEvent<ConfigMap>> {
        const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        for await (const event of real.watch(opts, signal)) {
          while (held && !signal.aborted) await Promise.race([gate, aborted]);
          if (signal.aborted) return;
          yield event;
        }
      },
    },
    hold: () => {
      held = true;
      gate = new Promise((resolve) => (released = resolve));
    },
    release: () => {
      held = false;
      released();
    },
  };
}

async function setup(readYourWrites: boolean) {
  const namespace = `ryw-${++nsCount}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'x' }, data: { n: '0' } } });
  const held = heldSource(namespace);
  const client = objectClient(kc, 'v1/configmaps', { namespace });
  const outcomes: ReconcileOutcome<ConfigMap>[] = [];
  const errors: Error[] = [];
  const start = (reconcile: (cm: ConfigMap) => Promise<{ requeueAfter: number } | undefined>): Controller<ConfigMap> => {
    const ctl = controller<ConfigMap>({ for: informer(held.source), readYourWrites, onError: (e) => errors.push(e), reconcile });
    controllers.push(ctl);
    subscriptions.push(ctl.subscribe((o) => outcomes.push(o)));
    return ctl;
  };
  return { namespace, held, client, outcomes, errors, start };
}

describe('read your own writes on a real kube-apiserver', () => {
  for (const on of [true, false]) {
    it(`a reconcile right after a patch reads ${on ? 'the patched version (readYourWrites on)' : 'the version before it (readYourWrites off)'}`, async () => {
      const t = await setup(on);
      const read: string[] = [];
      // Only the first call writes, so no later reconcile has a write of its own to wait for.
      let written = '';
      const ctl = t.start(async (cm) => {
        read.push(cm.metadata?.resourceVersion ?? '');
        if (read.length > 1) return undefined;
        t.held.hold();
        written = (await t.client.patch('x', { data: { n: '1' } })).metadata?.resourceVersion ?? '';
        return { requeueAfter: 0 };
      });
      if (on) {
        // The second reconcile has been taken from the queue and waits for the cache to show the first write.
        await waitFor(() => t.outcomes.length >= 1 && ctl.status().inFlight === 1, 'the second reconcile to start', 30_000);
        expect(read).toHaveLength(1);
        t.held.release();
        await waitFor(() => read.length >= 2, 'the second reconcile to read', 30_000);
        expect(read[1]).toBe(written);
        expect(Number(read[1])).toBeGreaterThan(Number(read[0]));
      } else {
        // Nothing holds the second reconcile back: it may have come and gone before a poll could see it in flight.
        await waitFor(() => read.length >= 2, 'the second reconcile to read', 30_000);
        expect(read[1]).toBe(read[0]);
        t.held.release();
      }
      expect(t.errors).toEqual([]);
    });
  }

  it('a deletion the server answers with a Status is waited for by uid: the next reconcile finds the object gone', async () => {
    const t = await setup(true);
    let calls = 0;
    let answer: unknown;
    t.start(async () => {
      calls++;
      if (calls > 1) return undefined;
      t.held.hold();
      answer = await t.client.delete('x');
      return { requeueAfter: 0 };
    });
    await waitFor(() => answer !== undefined, 'the delete', 30_000);
    // kube-apiserver answers a ConfigMap deletion with a Status naming the uid, without a resourceVersion.
    expect(answer).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'x', kind: 'configmaps' } });
    expect((answer as { details: { uid?: string } }).details.uid).toMatch(/.+/);
    await waitFor(() => t.outcomes.length >= 1, 'the first outcome', 30_000);
    t.held.release();
    await waitFor(() => t.outcomes.length >= 2, 'the second outcome', 30_000);
    expect(t.outcomes.slice(0, 2).map((o) => o.type)).toEqual(['reconciled', 'gone']);
    expect(calls).toBe(1);
  });
});
