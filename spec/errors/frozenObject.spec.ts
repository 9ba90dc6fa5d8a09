import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { explainFrozenWrite } from '../../src/errors/frozenObject.js';
import { HandlerError } from '../../src/informer/HandlerError.js';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

/** What `write` throws when it runs against a deep-frozen object. */
function thrownBy(write: (o: { spec: { replicas: number; tags: string[] }; status?: unknown }) => void): unknown {
  const o = Object.freeze({ spec: Object.freeze({ replicas: 1, tags: Object.freeze(['b', 'a']) as string[] }) });
  try {
    write(o);
  } catch (err) {
    return err;
  }
  throw new Error('the write did not throw');
}

describe('explainFrozenWrite', () => {
  it.each([
    ['assigning a field', (o: { spec: { replicas: number } }) => void (o.spec.replicas = 2), /^Cannot assign to read only property 'replicas'/],
    ['adding a field', (o: { status?: unknown }) => void (o.status = {}), /^Cannot add property status, object is not extensible/],
    ['deleting a field', (o: { spec: { replicas?: number } }) => void delete o.spec.replicas, /^Cannot delete property 'replicas'/],
    ['pushing to an array', (o: { spec: { tags: string[] } }) => void o.spec.tags.push('b'), /^Cannot add property 2, object is not extensible/],
    ['sorting an array in place', (o: { spec: { tags: string[] } }) => void o.spec.tags.sort(), /^Cannot assign to read only property '0'/],
    ['defining a property', (o: object) => void Object.defineProperty(o, 'x', { value: 1 }), /^Cannot define property x, object is not extensible/],
  ])('explains %s: the engine message, why, how to copy, and the original as cause', (_what, write, engineMessage) => {
    const original = thrownBy(write as never);
    const explained = explainFrozenWrite(original);
    expect(explained).toBeInstanceOf(TypeError);
    expect(explained).not.toBe(original);
    expect((explained as Error).message).toMatch(engineMessage);
    expect((explained as Error).message).toContain('objects from the cache are deep-frozen');
    expect((explained as Error).message).toContain('structuredClone(obj)');
    expect((explained as Error).cause).toBe(original);
  });

  it('returns any other error, or non-error, unchanged', () => {
    const other = new TypeError('Cannot read properties of undefined (reading "spec")');
    expect(explainFrozenWrite(other)).toBe(other);
    const notType = new Error('Cannot assign to read only property x');
    expect(explainFrozenWrite(notType)).toBe(notType);
    expect(explainFrozenWrite('a string')).toBe('a string');
  });
});

describe('informer handlers that write to a cached object', () => {
  let server: ApiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('report a HandlerError whose cause explains the frozen object', async () => {
    server = await startApiServer({ port: 0 });
    await server.create('v1/pods', pod('web'));
    const life = new Lifetimes();
    const pods = life.track(informer<V1Pod>(kubeSource(server.kubeConfig(), 'v1/pods')));
    const errors: Error[] = [];
    const errSub = pods.errors$.subscribe((e) => errors.push(e));
    pods.addHandler({
      add: (p) => {
        (p.metadata as { labels?: Record<string, string> }).labels = { seen: 'yes' };
      },
    });
    pods.subscribe();
    await waitFor(() => errors.length > 0, 'the handler error', 10_000);
    await life.end();
    errSub.unsubscribe();
    expect(errors[0]).toBeInstanceOf(HandlerError);
    const cause = errors[0]?.cause as Error;
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause.message).toMatch(/^Cannot add property labels, object is not extensible: objects from the cache are deep-frozen/);
    expect(errors[0]?.message).toContain('structuredClone(obj)');
    expect((cause.cause as Error).message).toBe('Cannot add property labels, object is not extensible');
  });
});
