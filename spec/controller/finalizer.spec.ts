import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { isConflict } from '../../src/errors/api/index.js';
import { objectClient } from '../../src/client/objectClient.js';
import type { ObjectClient } from '../../src/client/types.js';
import { finalizer, FinalizerError } from '../../src/controller/finalizer.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

const NAME = 'example.com/cleanup';
let server: ApiServer;
let client: ObjectClient<V1ConfigMap>;

beforeEach(async () => {
  server = await startApiServer({ port: 0 });
  client = objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
});

afterEach(async () => {
  await server.close();
});

async function configMap(name: string, finalizers?: string[]): Promise<V1ConfigMap> {
  return server.create<V1ConfigMap>('v1/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', ...(finalizers !== undefined && { finalizers }) },
    data: { v: '1' },
  });
}

const current = (name: string): V1ConfigMap | undefined => server.get<V1ConfigMap>('v1/configmaps', 'default', name);

/** Handlers that record what ran. */
function recording(): { ran: string[]; apply: (o: V1ConfigMap) => undefined; cleanup: (o: V1ConfigMap) => undefined } {
  const ran: string[] = [];
  return {
    ran,
    apply: (o) => void ran.push(`apply ${o.metadata?.name}`),
    cleanup: (o) => void ran.push(`cleanup ${o.metadata?.name}`),
  };
}

describe('finalizer over HTTP', () => {
  it('adds itself to a live object first, without running apply; the next call runs apply', async () => {
    const cm = await configMap('a', ['other.io/keep']);
    const h = recording();
    await expect(finalizer(client, NAME, cm, h)).resolves.toBeUndefined();
    expect(h.ran).toEqual([]);
    const after = current('a');
    expect(after?.metadata?.finalizers).toEqual(['other.io/keep', NAME]);
    await expect(finalizer(client, NAME, after as V1ConfigMap, { ...h, apply: () => ({ requeueAfter: 7 }) })).resolves.toEqual({ requeueAfter: 7 });
  });

  it('refuses to add over a stale object: 409 Conflict, wrapped with the phase, and the object unchanged', async () => {
    const stale = await configMap('b');
    await server.update('v1/configmaps', { ...stale, data: { v: '2' } });
    const err = await finalizer(client, NAME, stale, recording()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FinalizerError);
    expect((err as FinalizerError).phase).toBe('add');
    expect(isConflict((err as FinalizerError).cause)).toBe(true);
    expect(current('b')?.metadata?.finalizers).toBeUndefined();
  });

  it('on deletion runs cleanup, then removes only its own finalizer; the last one lets the object go', async () => {
    await configMap('c', [NAME, 'other.io/keep']);
    await server.delete('v1/configmaps', 'default', 'c');
    const h = recording();
    await finalizer(client, NAME, current('c') as V1ConfigMap, h);
    expect(h.ran).toEqual(['cleanup c']);
    expect(current('c')?.metadata?.finalizers).toEqual(['other.io/keep']);

    await configMap('d', [NAME]);
    await server.delete('v1/configmaps', 'default', 'd');
    await finalizer(client, NAME, current('d') as V1ConfigMap, h);
    expect(h.ran).toEqual(['cleanup c', 'cleanup d']);
    expect(current('d')).toBeUndefined();
  });

  it('keeps the finalizer when cleanup fails, and says which phase failed', async () => {
    await configMap('e', [NAME]);
    await server.delete('v1/configmaps', 'default', 'e');
    const err = await finalizer(client, NAME, current('e') as V1ConfigMap, {
      apply: () => undefined,
      cleanup: () => Promise.reject(new Error('backend down')),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FinalizerError);
    expect((err as FinalizerError).phase).toBe('cleanup');
    // Says which finalizer of which object, and which step: not "cleanup <name>" as if an object were named after the finalizer.
    expect((err as Error).message).toBe('finalizer "example.com/cleanup" of default/e: the cleanup handler failed: backend down');
    expect(current('e')?.metadata?.finalizers).toEqual([NAME]);
  });

  it('does nothing for an object being deleted without its finalizer, and a removal that finds the object gone is done', async () => {
    await configMap('f', ['other.io/keep']);
    await server.delete('v1/configmaps', 'default', 'f');
    const h = recording();
    await finalizer(client, NAME, current('f') as V1ConfigMap, h);
    expect(h.ran).toEqual([]);

    await configMap('g', [NAME]);
    await server.delete('v1/configmaps', 'default', 'g');
    const seen = current('g') as V1ConfigMap;
    await server.patch('v1/configmaps', 'default', 'g', { metadata: { finalizers: null } }); // someone else finished it
    expect(current('g')).toBeUndefined();
    await expect(finalizer(client, NAME, seen, h)).resolves.toBeUndefined();
    expect(h.ran).toEqual(['cleanup g']);
  });

  it('checks its arguments up front', () => {
    const obj: V1ConfigMap = { metadata: { name: 'x', namespace: 'default', resourceVersion: '1' } };
    const h = recording();
    expect(() => finalizer(client, 'has space', obj, h)).toThrow(/name must be a finalizer name.*"has space"/);
    expect(() => finalizer(client, NAME, {} as V1ConfigMap, h)).toThrow(/obj must be an object with metadata.name/);
    expect(() => finalizer(client, NAME, obj, { apply: h.apply } as never)).toThrow(/handlers must be/);
    expect(() => finalizer(client, NAME, obj, h, null as never)).toThrow(/ctx must be the reconcile's context or \{ signal \}, got null/);
    expect(() => finalizer(client, NAME, obj, h, { signal: 'x' as never })).toThrow(/ctx.signal must be an AbortSignal, got "x"/);
  });

  it('hands the context it is given (the reconcile ctx) to apply and cleanup, and aborts its writes with its signal', async () => {
    const cm = await configMap('h', [NAME]);
    const ac = new AbortController();
    const ctx = { key: 'default/h', signal: ac.signal, retries: 2, store: { getByKey: () => undefined, keyOf: () => '' } };
    const seen: unknown[] = [];
    await finalizer(client, NAME, cm, { apply: (_o, c) => void seen.push(c), cleanup: () => undefined }, ctx);
    expect(seen).toEqual([ctx]);
    expect(seen[0]).toBe(ctx);
    await server.delete('v1/configmaps', 'default', 'h');
    await finalizer(client, NAME, current('h') as V1ConfigMap, { apply: () => undefined, cleanup: (_o, c) => void seen.push(c.retries) }, ctx);
    expect(seen).toEqual([ctx, 2]);
    expect(current('h')).toBeUndefined();
    // The signal reaches the finalizer's own write.
    const other = await configMap('i');
    ac.abort(new Error('shutting down'));
    const err = await finalizer(client, NAME, other, recording(), ctx).catch((e: unknown) => e);
    expect((err as FinalizerError).phase).toBe('add');
    expect((err as Error).message).toBe('finalizer "example.com/cleanup" of default/i: adding it to the object failed: shutting down');
  });

  it('says which client was wrong when the client and the object disagree on the namespace', async () => {
    const cm = await configMap('j');
    const everywhere = objectClient(server.kubeConfig(), 'v1/configmaps');
    const err = await finalizer(everywhere, NAME, cm, recording()).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      'finalizer "example.com/cleanup" of default/j: adding it to the object failed: the client has no namespace, the object namespace "default": pass a client of the object\'s namespace, or a function (namespace) => objectClient(kc, resource, { namespace })',
    );
    expect((err as Error).message).not.toMatch(/undefined/);
  });
});
