/**
 * Custom resources defined once in TypeScript, against a real kube-apiserver (which refuses a CRD whose
 * schema is not structural): CRDs generated from a zod and a valibot schema are accepted and Established;
 * the server applies the schemas' defaults, refuses an invalid object at the same field path as the
 * simulator given the same CRD, enforces a CEL rule carried from the schema's metadata, serves the scale
 * subresource; and the example operator converges on its Websites.
 */
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { CustomObjectsApi, type V1CustomResourceDefinition, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { objectClient } from '../../src/client/objectClient.js';
import { customResource, type CustomResource } from '../../src/crd/index.js';
import type { KubeObject } from '../../src/store/types.js';
import { KubeApiError } from '../../src/errors/api/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import buildDist from '../helpers/buildDist.js';
import { waitFor } from '../helpers/waitFor.js';
import { convergenceProblems, playDeploymentController, sampleWebsite, WEBHOOK_SERVICE, Website, websiteOperator, type WebsiteOperator } from '../../examples/website-operator.js';
import { startCluster, type Cluster } from './cluster.js';

const NS = 'crd-e2e';

/** zod, with a default, bounds, an enum, a CEL rule across two fields and the scale subresource. */
const Gadget = customResource({
  group: 'e2e.example.com',
  version: 'v1',
  kind: 'Gadget',
  spec: z
    .object({
      size: z.enum(['small', 'large']).default('small'),
      replicas: z.number().int().min(0).max(50).default(1),
      minReplicas: z.number().int().min(0).optional(),
    })
    .meta({ 'x-kubernetes-validations': [{ rule: '!has(self.minReplicas) || self.minReplicas <= self.replicas', message: 'minReplicas must not exceed replicas' }] }),
  status: z.object({ replicas: z.number().int().optional() }),
  subresources: { status: true, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
});

/** valibot, cluster-scoped, with a default, a pattern and a required field. */
const Widget = customResource({
  group: 'e2e.example.com',
  version: 'v1',
  kind: 'Widget',
  scope: 'Cluster',
  spec: toStandardJsonSchema(v.object({ color: v.pipe(v.string(), v.regex(/^[a-z]+$/)), weight: v.optional(v.number(), 5) })),
});

let cluster: Cluster;
let simulator: ApiServer;
let operator: WebsiteOperator | undefined;
const subscriptions: Subscription[] = [];
let played: { unsubscribe(): void } | undefined;

/** The CRD as the server has it. */
async function established(name: string): Promise<void> {
  const crds = objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions');
  let last: V1CustomResourceDefinition | undefined;
  await waitFor(
    async () => (last = await crds.get(name)).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true,
    `${name} Established`,
    30_000,
    { everyMs: 100, describe: () => JSON.stringify(last?.status?.conditions ?? []) },
  );
}

/** The 422 a create of `obj` gets, as the field paths and reasons of its causes. */
async function refusal(kc: Cluster['kubeConfig'], def: CustomResource<KubeObject>, obj: KubeObject): Promise<{ field?: string; reason?: string }[]> {
  const err: unknown = await objectClient(kc, def, def.namespaced ? { namespace: NS } : {}).create(obj).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KubeApiError);
  expect((err as KubeApiError).status).toBe(422);
  return ((err as KubeApiError).details?.details?.causes ?? []).map((c) => ({ field: c.field, reason: c.reason }));
}

beforeAll(async () => {
  buildDist();
  cluster = await startCluster();
  await objectClient(cluster.kubeConfig, 'v1/namespaces').create({ metadata: { name: NS } });
  const crds = objectClient(cluster.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions', { fieldManager: 'e2e' });
  // The Website CRD as examples/deploy has it: its conversion webhook is never called here, since every Website
  // is written and read in v1, its storage version.
  const websiteCrd = Website.crd({ conversionWebhook: { service: WEBHOOK_SERVICE } });
  for (const crd of [Gadget.crd(), Widget.crd(), websiteCrd]) {
    await crds.apply(crd as never, { force: true });
    await established(crd.metadata.name);
  }
  simulator = await startApiServer({ crds: [Gadget.crd(), Widget.crd(), websiteCrd] });
  await simulator.create('v1/namespaces', { metadata: { name: NS } });
}, 180_000);

afterAll(async () => {
  for (const s of subscriptions) s.unsubscribe();
  played?.unsubscribe();
  await simulator?.close();
  await cluster?.stop();
});

describe('CRDs generated from schemas, on a real kube-apiserver', () => {
  it('applies the schemas defaults, from zod and from valibot', async () => {
    const gadget = await objectClient(cluster.kubeConfig, Gadget, { namespace: NS }).create({
      apiVersion: 'e2e.example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'defaults' },
      spec: {} as never,
    });
    expect(gadget.spec).toEqual({ size: 'small', replicas: 1 });
    const widget = await objectClient(cluster.kubeConfig, Widget).create({ apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'defaults' }, spec: { color: 'red' } as never });
    expect(widget.spec).toEqual({ color: 'red', weight: 5 });
    // The simulator, given the same CRDs, defaults the same way.
    const simGadget = await objectClient(simulator.kubeConfig(), Gadget, { namespace: NS }).create({ apiVersion: 'e2e.example.com/v1', kind: 'Gadget', metadata: { name: 'defaults' }, spec: {} as never });
    expect(simGadget.spec).toEqual(gadget.spec);
  });

  it('refuses an invalid object at the same field paths as the simulator, and the library validator names them too', async () => {
    const cases: [CustomResource<KubeObject>, KubeObject][] = [
      [Gadget, { apiVersion: 'e2e.example.com/v1', kind: 'Gadget', metadata: { name: 'too-many' }, spec: { replicas: 60 } } as KubeObject],
      [Gadget, { apiVersion: 'e2e.example.com/v1', kind: 'Gadget', metadata: { name: 'bad-size' }, spec: { size: 'huge' } } as KubeObject],
      [Widget, { apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'no-color' }, spec: {} } as KubeObject],
      [Widget, { apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'bad-color' }, spec: { color: 'Red!' } } as KubeObject],
    ];
    for (const [def, obj] of cases) {
      const real = await refusal(cluster.kubeConfig, def, obj);
      const simulated = await refusal(simulator.kubeConfig(), def, obj);
      expect(simulated, obj.metadata?.name).toEqual(real);
      const issues = 'issues' in def.validate(obj) ? (def.validate(obj) as { issues: readonly { path: string }[] }).issues : [];
      // '<nil>' is the server's cause for CEL rules it skipped on an invalid object: about the object, not a field.
      expect(issues.map((i) => i.path), obj.metadata?.name).toEqual(real.filter((c) => c.field !== '<nil>').map((c) => c.field));
    }
  });

  it('enforces a CEL rule carried from the schema', async () => {
    const obj = { apiVersion: 'e2e.example.com/v1', kind: 'Gadget', metadata: { name: 'cel' }, spec: { replicas: 2, minReplicas: 3 } } as KubeObject;
    const err: unknown = await objectClient(cluster.kubeConfig, Gadget, { namespace: NS }).create(obj as never).catch((e: unknown) => e);
    expect((err as KubeApiError).status).toBe(422);
    expect((err as KubeApiError).message).toContain('minReplicas must not exceed replicas');
    const simulated = await refusal(simulator.kubeConfig(), Gadget, obj);
    expect(simulated).toEqual(((err as KubeApiError).details?.details?.causes ?? []).map((c) => ({ field: c.field, reason: c.reason })));
    await objectClient(cluster.kubeConfig, Gadget, { namespace: NS }).create({ ...obj, spec: { replicas: 3, minReplicas: 3 } } as never);
  });

  it('serves the scale subresource at the definition paths', async () => {
    const gadgets = objectClient(cluster.kubeConfig, Gadget, { namespace: NS });
    await gadgets.create({ apiVersion: 'e2e.example.com/v1', kind: 'Gadget', metadata: { name: 'scaled' }, spec: { replicas: 2 } as never });
    const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const at = { group: 'e2e.example.com', version: 'v1', namespace: NS, plural: 'gadgets', name: 'scaled' };
    const scale = (await api.getNamespacedCustomObjectScale(at)) as { kind: string; spec: { replicas: number } };
    expect(scale.kind).toBe('Scale');
    expect(scale.spec.replicas).toBe(2);
    await api.replaceNamespacedCustomObjectScale({ ...at, body: { ...scale, spec: { replicas: 4 } } });
    expect((await gadgets.get('scaled')).spec.replicas).toBe(4);
  });
});

describe('examples/website-operator on a real kube-apiserver', () => {
  it('gives every Website its Deployment and Service and turns it Ready', async () => {
    const kc = cluster.kubeConfig;
    // No controller-manager runs here: the example's stand-in reports the Deployments' replicas ready.
    played = playDeploymentController(kc);
    operator = websiteOperator(kc);
    subscriptions.push(operator.controller.subscribe());
    const websites = objectClient(kc, Website, { namespace: NS, fieldManager: 'e2e' });
    await websites.create(sampleWebsite('blog', 'nginx:1.27', 2, NS));
    await websites.create(sampleWebsite('shop', 'shop:3.1', undefined, NS));
    let last: string[] = [];
    const problems = async (): Promise<string[]> => {
      const [ws, ds, ss] = await Promise.all([
        websites.list(),
        objectClient(kc, 'apps/v1/deployments', { namespace: NS }).list(),
        objectClient(kc, 'v1/services', { namespace: NS }).list(),
      ]);
      return convergenceProblems(ws.items, ds.items as V1Deployment[], ss.items as V1Service[]);
    };
    await waitFor(async () => (last = await problems()).length === 0, 'the Websites to converge', 60_000, { everyMs: 200, describe: () => last.join('; ') });
    // A spec change is followed.
    await websites.patch('blog', { spec: { replicas: 3 } });
    await waitFor(async () => (last = await problems()).length === 0, 'the scaled Website to converge', 60_000, { everyMs: 200, describe: () => last.join('; ') });
    const shop = await websites.get('shop');
    expect(shop.spec.replicas).toBe(1);
  }, 150_000);
});
