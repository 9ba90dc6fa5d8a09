import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import type { KubeObject } from '../../src/store/types.js';
import { settle, virtualClock } from '../workqueue/virtualTime.js';
import { memorySource, obj } from './memorySource.js';

type Command = { readonly type: 'change'; readonly key: number } | { readonly type: 'finish'; readonly pick: number; readonly fail: boolean };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ type: fc.constant('change' as const), key: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ type: fc.constant('finish' as const), pick: fc.nat(), fail: fc.boolean() }),
);

describe('controller: properties', () => {
  it('never runs one key twice at once, and every key is finally reconciled at its newest version', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 60 }), fc.integer({ min: 1, max: 3 }), async (commands, concurrency) => {
        const clock = virtualClock();
        const primary = memorySource<KubeObject>();
        primary.sync();
        const versions = new Map<string, number>();
        const inFlight: { key: string; finish: (fail: boolean) => void }[] = [];
        const lastSeen = new Map<string, string | undefined>();
        let overlap: string | undefined;
        const ctl = controller<KubeObject>({
          for: primary,
          concurrency,
          scheduler: clock.scheduler,
          // Nothing consumes the outcomes here, so failures are reported; this spec is about scheduling.
          onError: () => {},
          errorPolicy: () => ({ requeueAfter: 1 }),
          reconcile: (o, ctx) => {
            if (inFlight.some((r) => r.key === ctx.key)) overlap = ctx.key;
            lastSeen.set(ctx.key, o.metadata?.resourceVersion);
            return new Promise<undefined>((resolve, reject) => {
              inFlight.push({ key: ctx.key, finish: (fail) => (fail ? reject(new Error('fail')) : resolve(undefined)) });
            });
          },
        });
        const sub = ctl.subscribe();
        const finishAt = async (i: number, fail: boolean): Promise<void> => {
          const [r] = inFlight.splice(i, 1);
          r?.finish(fail);
          await settle(20);
        };
        for (const c of commands) {
          if (c.type === 'change') {
            const name = `k${c.key}`;
            const rv = (versions.get(name) ?? 0) + 1;
            versions.set(name, rv);
            primary.upsert(obj(name, { rv: String(rv) }));
          } else if (inFlight.length > 0) {
            await finishAt(c.pick % inFlight.length, c.fail);
          }
          await settle(20);
          clock.advance(1);
          await settle(20);
        }
        // Let everything finish successfully until nothing is left to do.
        for (let guard = 0; guard < 200 && (inFlight.length > 0 || ctl.status().queueDepth > 0); guard++) {
          if (inFlight.length > 0) await finishAt(0, false);
          clock.advance(1);
          await settle(20);
        }
        sub.unsubscribe();
        expect(overlap).toBeUndefined();
        expect(inFlight).toEqual([]);
        for (const [name, rv] of versions) expect(lastSeen.get(`default/${name}`)).toBe(String(rv));
      }),
      { numRuns: 60 },
    );
  });
});
