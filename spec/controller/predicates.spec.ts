import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  controller,
  generationChanged,
  informer,
  kubeSource,
  labelsChanged,
  objectClient,
  type Controller,
  type Informer,
  type KubeObject,
  type ReconcileOutcome,
} from '../../src/index.js';
import type { ControllerSource, ForSource } from '../../src/core.js';
import type { Predicate } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

interface Website extends KubeObject {
  spec?: { image: string };
  status?: { phase?: string; observedGeneration?: number };
}

const WEBSITES = { group: 'example.com', version: 'v1', plural: 'websites', namespaced: true } as const;
let server: ApiServer;
let running: { ctl: Controller<Website>; sub: Subscription } | undefined;
let outcomes: ReconcileOutcome<Website>[];
let errors: Error[];

beforeEach(async () => {
  server = await startApiServer();
  server.registerResource({ ...WEBSITES, kind: 'Website', subresources: { status: {} } });
  outcomes = [];
  errors = [];
});
afterEach(async () => {
  await running?.ctl.shutdown();
  running?.sub.unsubscribe();
  running = undefined;
  await server.close();
});

/**
 * An operator as people write it: a new Website gets its status written in two steps (Progressing, then Ready),
 * each a status write of its own that the informer sees as an update.
 */
function start(primary: (source: Informer<Website>) => ControllerSource<Website> | ForSource<Website>): Controller<Website> {
  const websites = informer(kubeSource<Website>(server.kubeConfig(), WEBSITES));
  const client = objectClient<Website>(server.kubeConfig(), WEBSITES, { fieldManager: 'website-controller' });
  const status = (w: Website, phase: string, signal: AbortSignal) =>
    client.applyStatus({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: w.metadata?.name as string, namespace: w.metadata?.namespace }, status: { phase, observedGeneration: w.metadata?.generation } }, { force: true, signal });
  const ctl = controller<Website>({
    for: primary(websites),
    onError: (e) => errors.push(e),
    reconcile: async (w, ctx) => {
      if (w.status?.phase !== undefined) return;
      await status(w, 'Progressing', ctx.signal);
      await status(w, 'Ready', ctx.signal);
    },
  });
  running = { ctl, sub: ctl.subscribe((o) => outcomes.push(o)) };
  return ctl;
}

const reconcilesOf = (name: string, generation: number): number =>
  outcomes.filter((o) => o.type === 'reconciled' && o.obj.metadata?.name === name && o.obj.metadata.generation === generation).length;

/**
 * Creates a Website, waits until its status is Ready, then changes its spec (generation 2) and waits for that
 * reconcile: events arrive in order, so by then every event of the status writes has been through the controller.
 */
async function createThenChangeSpec(ctl: Controller<Website>, name: string): Promise<void> {
  await waitFor(() => ctl.status().state === 'running', 'the controller to sync');
  await server.create('example.com/v1/websites', { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name, namespace: 'default' }, spec: { image: 'nginx:1' } });
  await waitFor(() => server.get<Website>('example.com/v1/websites', 'default', name)?.status?.phase === 'Ready', 'the status to be Ready');
  const ready = server.get<Website>('example.com/v1/websites', 'default', name) as Website;
  await server.update('example.com/v1/websites', { ...ready, spec: { image: 'nginx:2' } });
  await waitFor(() => reconcilesOf(name, 2) > 0, 'the reconcile of generation 2');
  await waitFor(() => ctl.status().queueDepth === 0 && ctl.status().inFlight === 0, 'the controller to be idle');
}

describe('predicates on a controller\'s for (CR-113, CR-114)', () => {
  it('with generationChanged, a create followed by the controller\'s own status writes costs one reconcile', async () => {
    const ctl = start((source) => ({ source, predicates: [generationChanged] }));
    await createThenChangeSpec(ctl, 'blog');
    expect(reconcilesOf('blog', 1)).toBe(1);
    expect(reconcilesOf('blog', 2)).toBe(1);
    expect(ctl.status().reconciles).toBe(2);
    expect(errors).toEqual([]);
  });

  it('without predicates, each status write wakes the controller again', async () => {
    const ctl = start((source) => source);
    await createThenChangeSpec(ctl, 'blog');
    // The create, then the writes' updates: how many depends on how many arrive while a reconcile runs.
    expect(reconcilesOf('blog', 1)).toBeGreaterThan(1);
  });

  it('a deletion always passes, and the key is reported gone', async () => {
    const ctl = start((source) => ({ source, predicates: [generationChanged] }));
    await createThenChangeSpec(ctl, 'shop');
    await server.delete('example.com/v1/websites', 'default', 'shop');
    await waitFor(() => outcomes.some((o) => o.type === 'gone' && o.key === 'default/shop'), 'the deletion to reach the controller');
  });

  it('a predicate that throws lets the change through and is reported to onError', async () => {
    const boom: Predicate<Website> = () => {
      throw new Error('bad predicate');
    };
    const ctl = start((source) => ({ source, predicates: [boom] }));
    await createThenChangeSpec(ctl, 'news');
    expect(reconcilesOf('news', 1)).toBeGreaterThan(1);
    expect(errors.some((e) => /a predicate threw, the object was let through/.test(e.message) && /bad predicate/.test(String((e as { cause?: Error }).cause?.message)))).toBe(true);
  });
});

describe('predicates on owns and watches (CR-115)', () => {
  it('an owned object\'s changes enqueue the owner only when a predicate passes', async () => {
    const websites = informer(kubeSource<Website>(server.kubeConfig(), WEBSITES));
    const configMaps = informer(kubeSource(server.kubeConfig(), 'v1/configmaps'));
    const seen: string[] = [];
    const ctl = controller<Website>({
      for: websites,
      owns: [{ source: configMaps, kind: 'Website', apiVersion: 'example.com/v1', predicates: [labelsChanged] }],
      reconcile: (w) => void seen.push(w.metadata?.name as string),
    });
    running = { ctl, sub: ctl.subscribe((o) => outcomes.push(o)) };
    await waitFor(() => ctl.status().state === 'running', 'the controller to sync');
    const create = (name: string) => server.create<Website>('example.com/v1/websites', { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name, namespace: 'default' } });
    const owned = (name: string, owner: Website) =>
      server.create<V1ConfigMap>('v1/configmaps', {
        metadata: { name, namespace: 'default', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Website', name: owner.metadata?.name as string, uid: owner.metadata?.uid as string, controller: true }] },
        data: { a: '1' },
      });
    const blog = await create('blog');
    const other = await create('other');
    await waitFor(() => seen.length === 2, 'the owners\' first reconciles');
    const cm = await owned('blog-config', blog);
    await waitFor(() => seen.length === 3, 'the owned object\'s creation to wake its owner');
    // A data change: the labels did not change, so the owner is not woken. The same informer's next event (a
    // ConfigMap of another owner) comes after it, so once that owner is reconciled the change was judged.
    const changed = await server.update<V1ConfigMap>('v1/configmaps', { ...cm, data: { a: '2' } });
    await owned('other-config', other);
    await waitFor(() => seen.filter((n) => n === 'other').length === 2, 'the fence: the other owner woken');
    await waitFor(() => ctl.status().queueDepth === 0 && ctl.status().inFlight === 0, 'the controller to be idle');
    expect(seen.filter((n) => n === 'blog')).toHaveLength(2);
    // A label change passes.
    await server.update('v1/configmaps', { ...changed, metadata: { ...changed.metadata, labels: { tier: 'web' } } });
    await waitFor(() => seen.filter((n) => n === 'blog').length === 3, 'the label change to wake the owner');
  });

  it('checks the predicates up front, naming where', () => {
    const websites = informer(kubeSource<Website>(server.kubeConfig(), WEBSITES));
    const reconcile = (): undefined => undefined;
    expect(() => controller({ for: { source: websites, predicates: ['x' as never] }, reconcile })).toThrow('controller: for.predicates[0] must be a function, got "x"');
    expect(() => controller({ for: { source: websites, predicates: generationChanged as never }, reconcile })).toThrow(/controller: for.predicates must be an array of predicates/);
    expect(() => controller({ for: { source: websites, filter: [] } as never, reconcile })).toThrow('controller: option "for" takes { source, predicates }, got unknown "filter"');
    expect(() => controller({ for: { source: {} as never }, reconcile })).toThrow(/for.source must be an informer/);
    expect(() => controller({ for: websites, owns: [{ source: websites, predicates: [1 as never] }], reconcile })).toThrow('controller: owns[0].predicates[0] must be a function, got 1');
    expect(() => controller({ for: websites, watches: [{ source: websites, map: () => [], predicates: [null as never] }], reconcile })).toThrow('controller: watches[0].predicates[0] must be a function, got null');
  });

  it('types: the predicates are typed by the source', () => {
    const websites = informer(kubeSource<Website>(server.kubeConfig(), WEBSITES));
    const c = controller({ for: { source: websites, predicates: [generationChanged, (w) => w.status?.phase] }, reconcile: (w) => void w.spec?.image });
    expectTypeOf(c).toEqualTypeOf<Controller<Website>>();
    const mistakes = (): void => {
      // @ts-expect-error a predicate reads the source's objects
      controller({ for: { source: websites, predicates: [(w: { other: number }) => w.other] }, reconcile: () => undefined });
      // @ts-expect-error predicates are a list
      controller({ for: { source: websites, predicates: generationChanged }, reconcile: () => undefined });
    };
    void mistakes;
  });
});
