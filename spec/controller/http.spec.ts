import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import type { ReconcileOutcome } from '../../src/controller/types.js';
import { configMapController, convergenceProblems, FINALIZER, sampleDeployment, type ConfigMapController } from '../../examples/configmap-controller.js';
import { waitFor } from '../helpers/waitFor.js';

let server: ApiServer;
let running: ConfigMapController | undefined;
let subscription: Subscription | undefined;
let outcomes: ReconcileOutcome<V1Deployment>[];
// What the informers survived (restarts, dropped watches): collected here rather than printed.
let informerErrors: Error[];

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 500 });
  outcomes = [];
  informerErrors = [];
});

afterEach(async () => {
  if (running !== undefined) await running.controller.shutdown();
  subscription?.unsubscribe();
  running = undefined;
  await server.close();
});

function start(concurrency = 2): ConfigMapController {
  running = configMapController(server.kubeConfig(), { concurrency });
  subscription = running.controller.subscribe((o) => outcomes.push(o));
  subscription.add(running.deployments.errors$.subscribe((e) => informerErrors.push(e)));
  subscription.add(running.configMaps.errors$.subscribe((e) => informerErrors.push(e)));
  return running;
}

const problems = (): string[] => convergenceProblems(server.list<V1Deployment>('apps/v1/deployments'), server.list<V1ConfigMap>('v1/configmaps'));

async function converged(what: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => problems().length === 0, `${what}; still wrong: ${problems().join('; ')}`, timeoutMs);
}

describe('the configmap controller over HTTP', () => {
  it('gives every deployment its ConfigMap and finalizer, follows changes, and cleans up on deletion', async () => {
    for (const [name, replicas] of [['web', 3], ['api', 1]] as const) await server.create('apps/v1/deployments', sampleDeployment(name, replicas, `${name}:1`));
    const c = start();
    await converged('the first two deployments');
    expect(server.get<V1ConfigMap>('v1/configmaps', 'default', 'web-info')?.data).toMatchObject({ deployment: 'web', replicas: '3', images: 'web:1' });

    const web = server.get<V1Deployment>('apps/v1/deployments', 'default', 'web') as V1Deployment;
    await server.update('apps/v1/deployments', { ...web, spec: { ...web.spec, replicas: 5 } as V1Deployment['spec'] });
    await waitFor(() => server.get<V1ConfigMap>('v1/configmaps', 'default', 'web-info')?.data?.['replicas'] === '5', 'the ConfigMap to follow the new replicas');

    // Someone edits the ConfigMap: its owner is reconciled and applies its fields again. The key the editor
    // added is not the controller's, so server-side apply leaves it there.
    const cm = server.get<V1ConfigMap>('v1/configmaps', 'default', 'api-info') as V1ConfigMap;
    await server.update('v1/configmaps', { ...cm, data: { tampered: 'yes' } });
    await converged('the tampered ConfigMap to be restored');
    expect(server.get<V1ConfigMap>('v1/configmaps', 'default', 'api-info')?.data).toEqual({ tampered: 'yes', deployment: 'api', generation: '1', replicas: '1', images: 'api:1' });

    await server.delete('apps/v1/deployments', 'default', 'api');
    await waitFor(() => server.get('apps/v1/deployments', 'default', 'api') === undefined, 'the deployment to go once its finalizer is removed');
    expect(server.get('v1/configmaps', 'default', 'api-info')).toBeUndefined();
    await converged('after the deletion');
    await waitFor(() => outcomes.some((o) => o.type === 'gone' && o.key === 'default/api'), 'the deleted key to be reported gone');
    expect(c.controller.status()).toMatchObject({ state: 'running' });
  });

  it('converges under churn with failing writes, dropped watches and an API server restart', async () => {
    for (let i = 0; i < 6; i++) await server.create('apps/v1/deployments', sampleDeployment(`seed-${i}`, i + 1, `img:${i}`));
    const c = start(3);
    await converged('the seeded deployments');
    const failedBefore = c.controller.status().errors;

    const churn = server.churn({ resource: 'apps/v1/deployments', creates: 12, updates: 30, deletes: 8, perSecond: 40, seed: 11 });
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'patch', resource: 'apps/v1/deployments', times: 3 });
    server.faults.inject({ type: 'status', status: 503 }, { verb: 'patch', resource: 'v1/configmaps', times: 2 });
    // The controller writes its ConfigMaps with server-side apply: a PATCH, whether it creates or updates.
    server.faults.inject({ type: 'status', status: 500 }, { verb: 'patch', resource: 'v1/configmaps', times: 2 });
    await waitFor(() => server.faults.pending() === 0, 'the write faults to be taken');
    server.faults.closeWatches();
    await server.restart({ downMs: 300 });
    await churn.done;
    await converged('after churn and faults', 30_000);

    const status = c.controller.status();
    expect(status.errors).toBeGreaterThan(failedBefore); // the injected failures were met and retried
    expect(informerErrors.length).toBeGreaterThan(0); // the restart was felt, and survived
    expect(informerErrors.filter((e) => ['DecodeError', 'KeyError', 'IndexError', 'TransformError', 'HandlerError'].includes(e.name))).toEqual([]);
    expect(outcomes.some((o) => o.type === 'failed' && /500|503/.test(o.error.message))).toBe(true);
    const live = server.list<V1Deployment>('apps/v1/deployments');
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((d) => d.metadata?.finalizers?.includes(FINALIZER))).toBe(true);
    // Every deleted deployment is gone for good: cleaned up, finalizer removed.
    expect(server.list<V1ConfigMap>('v1/configmaps').length).toBe(live.length);
  }, 60_000);

  it('finishes the reconcile in flight on shutdown and releases the informers', async () => {
    await server.create('apps/v1/deployments', sampleDeployment('web', 1, 'web:1'));
    const c = start();
    await converged('the deployment');
    // A write that stalls holds a reconcile in flight: the apply never answers until the server restarts.
    server.faults.inject({ type: 'stall' }, { verb: 'patch', resource: 'v1/configmaps' });
    const web = server.get<V1Deployment>('apps/v1/deployments', 'default', 'web') as V1Deployment;
    await server.update('apps/v1/deployments', { ...web, spec: { ...web.spec, replicas: 2 } as V1Deployment['spec'] });
    await waitFor(() => c.controller.status().inFlight === 1 && server.faults.pending() === 0, 'a reconcile stuck in its write');
    const done = c.controller.shutdown();
    expect(c.controller.status().state).toBe('draining');
    await server.restart({ downMs: 0 }); // the stalled request fails; the reconcile ends
    await done;
    expect(c.controller.status()).toMatchObject({ state: 'stopped', inFlight: 0 });
    await waitFor(() => c.deployments.store.size === 0 && c.configMaps.store.size === 0, 'the informers to stop and empty their caches');
    running = undefined;
  });
});
