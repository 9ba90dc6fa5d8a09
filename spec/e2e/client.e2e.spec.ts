/**
 * The writing client against a real kube-apiserver and etcd: server-side apply conflicting with another
 * field manager and `force` taking over, the status subresource of a CRD that declares one, dry runs and
 * selected lists, and Events a controller's reconciles recorded, folded into a series when they repeat.
 * The simulator's tests assert the same wording, so a difference between the two shows up here.
 */
import { ApiextensionsV1Api, CoreV1Api, type EventsV1Event, type V1ConfigMap } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConflicts, isApplyConflict } from '../../src/client/conflicts.js';
import { isConflict, isNotFound, KubeApiError } from '../../src/errors/api/index.js';
import { objectClient } from '../../src/client/objectClient.js';
import { controller, type Controller } from '../../src/controller/controller.js';
import { recorder } from '../../src/events/recorder.js';
import type { EventRecorder } from '../../src/events/types.js';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { KubeObject } from '../../src/store/types.js';
import { startCluster, type Cluster } from './cluster.js';
import { waitFor } from '../helpers/waitFor.js';

const NS = 'client-e2e';
const GROUP = 'e2e.rxkube.test';
let cluster: Cluster;

interface Gadget extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string; observedGeneration?: number };
}

beforeAll(async () => {
  cluster = await startCluster();
  const kc = cluster.kubeConfig;
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  await ext.createCustomResourceDefinition({
    body: {
      metadata: { name: `gadgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: [{
          name: 'v1', served: true, storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } },
                status: { type: 'object', properties: { phase: { type: 'string' }, observedGeneration: { type: 'integer' } } },
              },
            },
          },
        }],
      },
    },
  });
  await waitFor(async () => {
    const crd = await ext.readCustomResourceDefinition({ name: `gadgets.${GROUP}` });
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  }, 'the CRD to be established', 60_000, { everyMs: 50 });
});

afterAll(async () => {
  await cluster?.stop();
});

const cmConfig = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const managers = (obj: KubeObject): string[] =>
  ((obj.metadata as { managedFields?: { manager: string; operation: string; subresource?: string }[] }).managedFields ?? []).map(
    (e) => `${e.manager}/${e.operation}${e.subresource === undefined ? '' : `/${e.subresource}`}`,
  );

describe('server-side apply on a real kube-apiserver', () => {
  it('a second field manager changing a field the first owns gets a conflict naming both; force takes the field over', async () => {
    const cms = objectClient(cluster.kubeConfig, 'v1/configmaps', { namespace: NS });
    const created = await cms.apply(cmConfig('owned', { a: '1', b: '2' }), { fieldManager: 'alice' });
    expect(managers(created)).toEqual(['alice/Apply']);

    const err = await cms.apply(cmConfig('owned', { a: 'mine' }), { fieldManager: 'bob' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(isApplyConflict(err)).toBe(true);
    expect(isConflict(err)).toBe(true);
    expect((err as KubeApiError).serverMessage).toBe('Apply failed with 1 conflict: conflict with "alice": .data.a');
    expect(applyConflicts(err)).toEqual([{ manager: 'alice', operation: 'Apply', field: '.data.a', message: 'conflict with "alice"' }]);
    expect((await cms.get('owned')).data).toEqual({ a: '1', b: '2' });

    const forced = await cms.apply(cmConfig('owned', { a: 'mine' }), { fieldManager: 'bob', force: true });
    expect(forced.data).toEqual({ a: 'mine', b: '2' });
    expect(managers(forced).sort()).toEqual(['alice/Apply', 'bob/Apply']);
    // Alice no longer owns `a`: leaving it out of her configuration leaves it alone; leaving out `b` removes it.
    const pruned = await cms.apply(cmConfig('owned', { c: '3' }), { fieldManager: 'alice' });
    expect(pruned.data).toEqual({ a: 'mine', c: '3' });
  });

  it('an Update owner is named with its apiVersion, several conflicts are listed per manager', async () => {
    const cms = objectClient(cluster.kubeConfig, 'v1/configmaps', { namespace: NS });
    await cms.create({ metadata: { name: 'updated' }, data: { a: '1' } }, { fieldManager: 'creator' });
    await cms.apply(cmConfig('updated', { b: '2' }), { fieldManager: 'helm' });
    const err = await cms.apply(cmConfig('updated', { a: 'x', b: 'y' }), { fieldManager: 'scaler' }).catch((e: unknown) => e);
    expect(isApplyConflict(err)).toBe(true);
    expect((err as KubeApiError).serverMessage).toBe('Apply failed with 2 conflicts: conflicts with "creator" using v1:\n- .data.a\nconflicts with "helm":\n- .data.b');
    expect(applyConflicts(err).map((c) => [c.manager, c.operation, c.field]).sort()).toEqual([
      ['creator', 'Update', '.data.a'],
      ['helm', 'Apply', '.data.b'],
    ]);
  });

  it('an apply that changes nothing writes nothing, and labels an applier leaves out go with their map', async () => {
    const cms = objectClient(cluster.kubeConfig, 'v1/configmaps', { namespace: NS, fieldManager: 'labeller' });
    const config = { ...cmConfig('labelled', { a: '1' }), metadata: { name: 'labelled', labels: { x: 'y' } } };
    const first = await cms.apply(config);
    const again = await cms.apply(config);
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    expect((again.metadata as { managedFields?: unknown }).managedFields).toEqual((first.metadata as { managedFields?: unknown }).managedFields);
    const bare = await cms.apply(cmConfig('labelled', { a: '1' }));
    expect(bare.metadata?.labels).toBeUndefined();
  });

  it('a dry run answers without storing, and a list selects by label and field', async () => {
    const cms = objectClient(cluster.kubeConfig, 'v1/configmaps', { namespace: NS, fieldManager: 'lister' });
    const dry = await cms.apply({ ...cmConfig('dry', { a: '1' }), metadata: { name: 'dry', labels: { kind: 'dry' } } }, { dryRun: true });
    expect(dry.data).toEqual({ a: '1' });
    const dryCreate = await cms.create({ metadata: { name: 'dry' } }, { dryRun: true });
    expect(dryCreate.metadata?.uid).toBeTruthy();
    expect(dryCreate.metadata?.resourceVersion).toBeUndefined();
    await expect(cms.get('dry')).rejects.toSatisfy(isNotFound);
    for (const [name, tier] of [['l1', 'gold'], ['l2', 'gold'], ['l3', 'silver']] as const) {
      await cms.apply({ ...cmConfig(name, {}), metadata: { name, labels: { tier } } });
    }
    const gold = await cms.list({ labelSelector: 'tier=gold', fieldSelector: 'metadata.name!=l1', pageSize: 1 });
    expect(gold.items.map((c) => c.metadata?.name)).toEqual(['l2']);
  });
});

describe('the status subresource of a CRD on a real kube-apiserver', () => {
  it('status is written only through /status, which bumps the resourceVersion and not the generation', async () => {
    const gadgets = objectClient<Gadget>(cluster.kubeConfig, `${GROUP}/v1/gadgets`, { namespace: NS, fieldManager: 'gadget-controller' });
    const created = await waitFor(async () => {
      try {
        return await gadgets.create({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 1 }, status: { phase: 'dropped' } });
      } catch {
        return false;
      }
    }, 'the gadgets endpoint to accept a create', 60_000, { everyMs: 50 });
    expect(created.status).toBeUndefined();
    const generation = created.metadata?.generation;

    const replaced = await gadgets.replaceStatus({ ...created, spec: { size: 99 }, status: { phase: 'Pending' } });
    expect(replaced.status).toEqual({ phase: 'Pending' });
    expect(replaced.spec).toEqual({ size: 1 });
    expect(replaced.metadata?.generation).toBe(generation);
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));

    const patched = await gadgets.patchStatus('g1', { status: { observedGeneration: generation } });
    expect(patched.status).toEqual({ phase: 'Pending', observedGeneration: generation });

    const applied = await gadgets.applyStatus({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, status: { phase: 'Ready' } }, { force: true });
    expect(applied.status?.phase).toBe('Ready');
    expect(managers(applied)).toContain('gadget-controller/Apply/status');
    expect((await gadgets.getStatus('g1')).status?.phase).toBe('Ready');

    const respec = await gadgets.patch('g1', { spec: { size: 2 }, status: { phase: 'Broken' } });
    expect(respec.spec?.size).toBe(2);
    expect(respec.status?.phase).toBe('Ready');
    expect(respec.metadata?.generation).toBe((generation ?? 0) + 1);
    const stale = await gadgets.replaceStatus({ ...created, status: { phase: 'Old' } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
  });
});

describe('Events on a real kube-apiserver', () => {
  it('an invalid Event is refused in the order and wording the simulator uses', async () => {
    const eventsClient = objectClient(cluster.kubeConfig, 'events.k8s.io/v1/events', { namespace: NS });
    const err = await eventsClient
      .create({
        metadata: { name: 'bad' },
        type: 'Info',
        reportingController: 'a/b',
        reportingInstance: 'i',
        reason: 'R',
        action: 'A',
        series: { count: 1, lastObservedTime: '2025-01-01T00:00:00.000000Z' },
        regarding: { kind: 'ConfigMap', name: 'c', namespace: 'other' },
      } as unknown as EventsV1Event) // deliberately without the eventTime the type requires
      .catch((e: unknown) => e);
    expect((err as KubeApiError).status).toBe(422);
    expect((err as KubeApiError).serverMessage).toBe(
      'Event "bad" is invalid: [involvedObject.namespace: Invalid value: "other": does not match event.namespace, series.count: Invalid value: "": should be at least 2, eventTime: Required value, type: Invalid value: "": has invalid value: Info]',
    );
  });
});

describe('Events recorded by a controller on a real kube-apiserver', () => {
  let events: EventRecorder;
  let ctl: Controller<V1ConfigMap>;
  let subscription: Subscription;

  afterAll(async () => {
    await ctl?.shutdown();
    subscription?.unsubscribe();
    await events?.close();
  });

  it('lists the Events of an object its reconciles recorded, a repeated one as a series', async () => {
    const kc = cluster.kubeConfig;
    const cms = objectClient(kc, 'v1/configmaps', { namespace: NS, fieldManager: 'e2e' });
    await cms.create({ metadata: { name: 'watched', labels: { app: 'recorded' } }, data: { v: '0' } });
    events = recorder(kc, { reportingController: 'e2e.rxkube.test/recording-controller', reportingInstance: 'e2e-0' });
    ctl = controller({
      for: informer(kubeSource(kc, 'v1/configmaps', { namespace: NS, labelSelector: 'app=recorded' })),
      reconcile: (cm) => {
        // 'watched' comes from the informer's LIST, whose items kube-apiserver sends without a kind: the cache has it (P-15).
        events.publish(cm, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'the configmap was seen' });
        if (cm.data?.['v'] === 'bad') events.publish(cm, { type: 'Warning', reason: 'BadValue', action: 'Validate', note: 'v is bad' });
        return undefined;
      },
    });
    subscription = ctl.subscribe();
    const eventsClient = objectClient(kc, 'events.k8s.io/v1/events', { namespace: NS });
    const about = async (): Promise<EventsV1Event[]> => (await eventsClient.list({ fieldSelector: 'regarding.name=watched,regarding.kind=ConfigMap' })).items;

    const [first] = await waitFor(async () => {
      const found = await about();
      return found.length > 0 && found;
    }, 'the first Event', 60_000, { everyMs: 50 });
    expect(first).toMatchObject({
      reportingController: 'e2e.rxkube.test/recording-controller',
      reportingInstance: 'e2e-0',
      type: 'Normal',
      reason: 'Synced',
      action: 'Reconcile',
      note: 'the configmap was seen',
      regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'watched', namespace: NS },
    });
    expect(first?.series).toBeUndefined();

    // Each change is one more reconcile and one more occurrence of the same event.
    for (const v of ['1', '2', 'bad']) {
      await cms.patch('watched', { data: { v } });
      await waitFor(async () => events.status().published >= (v === 'bad' ? 5 : Number(v) + 1), `the reconcile of v=${v}`, 60_000, { everyMs: 50 });
    }
    const all = await waitFor(async () => {
      const found = await about();
      const synced = found.find((e) => e.reason === 'Synced');
      return (synced?.series?.count ?? 0) >= 4 && found.some((e) => e.reason === 'BadValue') && found;
    }, 'the series and the warning', 60_000, { everyMs: 50 });
    const synced = all.filter((e) => e.reason === 'Synced');
    expect(synced).toHaveLength(1);
    expect(synced[0]?.series?.count).toBe(4);
    expect(Date.parse(String(synced[0]?.series?.lastObservedTime))).toBeGreaterThanOrEqual(Date.parse(String(synced[0]?.eventTime)));
    expect(all.find((e) => e.reason === 'BadValue')).toMatchObject({ type: 'Warning', action: 'Validate', note: 'v is bad' });
    expect(events.status()).toMatchObject({ failed: 0, dropped: 0, rateLimited: 0 });
  });
});
