import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { informer, type Informer } from '../../src/informer/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { unwrapTombstone } from '../../src/store/DeletedFinalStateUnknown.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

/** Every way a handler might change what it is given; in strict mode (this module) each must throw a TypeError. */
const mutations: readonly [string, (p: V1Pod) => void][] = [
  ['set a top-level field', (p) => void ((p as { kind?: string }).kind = 'Hacked')],
  ['replace metadata.labels', (p) => void ((p.metadata as { labels?: Record<string, string> }).labels = { hacked: 'yes' })],
  ['add a label', (p) => void ((p.metadata?.labels as Record<string, string>)['hacked'] = 'yes')],
  ['change a nested array element', (p) => void ((p.spec?.containers[0] as { image?: string }).image = 'evil')],
  ['push onto a nested array', (p) => void p.spec?.containers.push({ name: 'sidecar' })],
  ['delete a field', (p) => void delete (p.metadata as { name?: string }).name],
  ['define a property', (p) => void Object.defineProperty(p, 'extra', { value: 1 })],
];

/** Tries every mutation on `obj`, keeping what each threw. */
function tryAll(obj: V1Pod): unknown[] {
  return mutations.map(([, mutate]) => {
    try {
      mutate(obj);
      return undefined;
    } catch (err) {
      return err;
    }
  });
}

describe('objects handed to users are frozen', () => {
  let server: ApiServer | undefined;
  let inf: Informer<V1Pod> | undefined;

  const lifetimes = new Lifetimes();

  afterEach(async () => {
    await lifetimes.end();
    await server?.close();
    inf = undefined;
    server = undefined;
  });

  it('a handler mutating what add, update and delete give it gets a TypeError each time, and the cache keeps the server’s object', async () => {
    server = await startApiServer();
    const created = await server.create('v1/pods', pod('web', { labels: { app: 'web' } }));
    const s = server;
    inf = lifetimes.track(informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods')));
    const outcomes: { event: string; errors: unknown[] }[] = [];
    inf.addHandler({
      add: (p) => void outcomes.push({ event: 'add', errors: tryAll(p) }),
      update: (oldP, p) => void outcomes.push({ event: 'update-old', errors: tryAll(oldP) }, { event: 'update', errors: tryAll(p) }),
      delete: (p) => void outcomes.push({ event: 'delete', errors: tryAll(unwrapTombstone(p) as V1Pod) }),
    });
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.subscribe();
    await inf.whenSynced();
    await waitFor(() => outcomes.some((o) => o.event === 'add'), 'the add');
    const cached = inf.store.getByKey('default/web');
    expect(cached).toEqual(created);

    const patched = await s.patch('v1/pods', 'default', 'web', { metadata: { labels: { app: 'web', v: '2' } } });
    await waitFor(() => outcomes.some((o) => o.event === 'update'), 'the update');
    expect(inf.store.getByKey('default/web')).toEqual(patched);

    await s.delete('v1/pods', 'default', 'web');
    await waitFor(() => outcomes.some((o) => o.event === 'delete'), 'the delete');
    expect(inf.store.getByKey('default/web')).toBeUndefined();

    expect(outcomes.map((o) => o.event)).toEqual(['add', 'update-old', 'update', 'delete']);
    for (const o of outcomes) {
      expect(o.errors, o.event).toHaveLength(mutations.length);
      o.errors.forEach((err, i) => expect(err, `${o.event}: ${mutations[i]?.[0]}`).toBeInstanceOf(TypeError));
    }
    expect(errors).toEqual([]);
  });

  it('a handler that lets the TypeError escape is reported, the informer keeps going, and neither the cache nor later handlers see a change', async () => {
    server = await startApiServer();
    const created = await server.create('v1/pods', pod('web'));
    const s = server;
    inf = lifetimes.track(informer<V1Pod>(kubeSource(s.kubeConfig(), 'v1/pods')));
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.addHandler({
      add: (p) => {
        (p.metadata as { name?: string }).name = 'hijacked';
      },
    });
    const seenByOthers: V1Pod[] = [];
    inf.addHandler({ add: (p) => void seenByOthers.push(p) });
    inf.subscribe();
    await inf.whenSynced();
    await waitFor(() => errors.length > 0 && seenByOthers.length > 0, 'the handler error and the other handler');
    expect(errors[0]?.cause ?? errors[0]).toBeInstanceOf(TypeError);
    expect(seenByOthers[0]?.metadata?.name).toBe('web');
    expect(inf.store.getByKey('default/web')).toEqual(created);

    // Still running: a later object arrives.
    await s.create('v1/pods', pod('later'));
    await waitFor(() => inf?.store.getByKey('default/later'), 'the later pod');
  });

  it('what the store hands out is frozen too, and sloppy-mode code that writes to it changes nothing', async () => {
    server = await startApiServer();
    const created = await server.create('v1/pods', pod('web', { labels: { app: 'web' } }));
    inf = lifetimes.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods')));
    inf.subscribe();
    await inf.whenSynced();
    const listed = inf.store.list()[0] as V1Pod;
    expect(listed).toBeDefined();
    expect(tryAll(listed).every((e) => e instanceof TypeError)).toBe(true);
    // Function-constructor code is sloppy: the write is ignored rather than thrown.
    const sloppy = new Function('p', "p.metadata.labels.app = 'evil'; p.spec.containers[0].image = 'evil'; return p.metadata.labels.app;") as (p: V1Pod) => string;
    expect(sloppy(listed)).toBe('web');
    expect(inf.store.getByKey('default/web')).toEqual(created);
  });
});
