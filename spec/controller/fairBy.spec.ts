import { describe, expect, expectTypeOf, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import type { KubeObject } from '../../src/store/types.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { memorySource, obj } from './memorySource.js';

/** The namespace of a `namespace/name` key: the tenant, in these specs. */
const tenantOf = (key: string): string => key.slice(0, key.indexOf('/'));

describe('controller: fairBy shares the workers between groups of keys (LT-1…LT-3)', () => {
  it("takes the groups' keys in turn: a tenant's backlog of 100 does not hold up another tenant's 3 keys", async () => {
    const primary = memorySource<KubeObject>();
    for (let i = 0; i < 100; i++) primary.upsert(obj(`big-${i}`, { namespace: 'big' }));
    for (let i = 0; i < 3; i++) primary.upsert(obj(`small-${i}`, { namespace: 'small' }));
    primary.sync();
    const order: string[] = [];
    const open = deferred();
    const c = controller<KubeObject>({
      for: primary,
      fairBy: tenantOf,
      reconcile: async (_o, ctx) => {
        order.push(ctx.key);
        await open.promise;
      },
    });
    const sub = c.subscribe();
    try {
      await waitFor(() => order.length === 1 && c.status().queueDepth === 102, 'every key queued, one taken');
      expect(c.status().groups).toEqual({
        big: { depth: order[0]?.startsWith('big/') ? 99 : 100, inFlight: order[0]?.startsWith('big/') ? 1 : 0, reconciles: 0, errors: 0 },
        small: { depth: order[0]?.startsWith('small/') ? 2 : 3, inFlight: order[0]?.startsWith('small/') ? 1 : 0, reconciles: 0, errors: 0 },
      });
      open.resolve();
      await waitFor(() => c.status().succeeded.success === 103, 'every key reconciled');
      const small = order.flatMap((key, i) => (key.startsWith('small/') ? [i] : []));
      expect(small).toHaveLength(3);
      expect(Math.max(...small)).toBeLessThanOrEqual(6);
      expect(c.status().groups).toEqual({
        big: { depth: 0, inFlight: 0, reconciles: 100, errors: 0 },
        small: { depth: 0, inFlight: 0, reconciles: 3, errors: 0 },
      });
    } finally {
      sub.unsubscribe();
      await c.shutdown();
    }
  });

  it('counts failures per group, and a fairBy that throws is reported while its key is still reconciled', async () => {
    const primary = memorySource<KubeObject>();
    primary.upsert(obj('ok', { namespace: 'a' }));
    primary.upsert(obj('bad', { namespace: 'b' }));
    primary.upsert(obj('odd', { namespace: 'c' }));
    primary.sync();
    const errors: Error[] = [];
    const seen: string[] = [];
    const c = controller<KubeObject>({
      for: primary,
      onError: (err) => errors.push(err),
      fairBy: (key) => {
        if (key.startsWith('c/')) throw new Error('no tenant');
        return tenantOf(key);
      },
      reconcile: (_o, ctx) => {
        seen.push(ctx.key);
        if (ctx.key === 'b/bad') throw new Error('boom');
      },
      errorPolicy: () => undefined,
    });
    const sub = c.subscribe(() => {});
    try {
      await waitFor(() => seen.length === 3, 'every key reconciled');
      await waitFor(() => c.status().succeeded.success === 2, 'the outcomes counted');
      expect(errors.map((e) => e.message)).toEqual(["workQueue: fairBy failed for \"c/odd\"; it waits in the group '': no tenant"]);
      expect(c.status().groups).toEqual({
        '': { depth: 0, inFlight: 0, reconciles: 1, errors: 0 },
        a: { depth: 0, inFlight: 0, reconciles: 1, errors: 0 },
        b: { depth: 0, inFlight: 0, reconciles: 1, errors: 1 },
      });
    } finally {
      sub.unsubscribe();
      await c.shutdown();
    }
  });

  it('without fairBy there is no breakdown, and fairBy must be a function', () => {
    const primary = memorySource<KubeObject>();
    expect(controller<KubeObject>({ for: primary, reconcile: () => undefined }).status().groups).toBeUndefined();
    expect(() => controller<KubeObject>({ for: primary, reconcile: () => undefined, fairBy: 'namespace' as never })).toThrow(/fairBy.*"namespace"/);
    // Never called: for the compiler only.
    const mistakes = (): void => {
      // @ts-expect-error fairBy is given the key (a string) and names its group with a string
      controller<KubeObject>({ for: primary, reconcile: () => undefined, fairBy: (key: string) => key.length });
    };
    expectTypeOf(mistakes).toBeFunction();
  });
});
