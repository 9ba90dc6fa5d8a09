/**
 * PF-50: a watch's MODIFIED events may take their unchanged members from a cached object instead of parsing them,
 * when the consumer hands its source a lookup; the HTTP source takes them. The informer does not hand one yet.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { informer } from '../../src/informer/informer.js';
import type { InformerOptions } from '../../src/informer/types.js';
import { reflect } from '../../src/reflector/reflect.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher, ObjectList, WatchEvent, WatchOptions } from '../../src/sources/types.js';
import { deepFreeze } from '../../src/store/deepFreeze.js';
import { type ApiServer, startApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

interface Pod {
  metadata: { name: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
  spec?: { nodeName?: string; containers?: { name: string; image: string }[] };
}

const PODS = { version: 'v1', plural: 'pods' } as const;

let server: ApiServer;
beforeEach(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 60_000 });
});
afterEach(async () => {
  await server.close();
});

describe('the HTTP source takes what the hint holds unchanged', () => {
  it("hands a MODIFIED event's unchanged spec on as the cached object's own", async () => {
    const source = kubeSource<Pod>(server.kubeConfig(), PODS);
    const created = (await server.create(PODS, { metadata: { name: 'a', namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } })) as Pod;
    const cachedPod = deepFreeze(structuredClone(created));
    const asked: string[] = [];
    const ctl = new AbortController();
    const events: WatchEvent<Pod>[] = [];
    const done = (async () => {
      for await (const ev of source.watch({ resourceVersion: server.resourceVersion(), cached: (ns, name) => (asked.push(`${ns}/${name}`), cachedPod) }, ctl.signal)) {
        events.push(ev);
        if (ev.type === 'MODIFIED') break;
      }
    })();
    await waitFor(() => server.stats.watchesOpen === 1, 'the watch to open');
    await server.patch(PODS, 'default', 'a', { metadata: { annotations: { touched: 'yes' } } });
    await done;
    const modified = events.find((e) => e.type === 'MODIFIED');
    expect(asked).toEqual(['default/a']);
    const object = modified?.object as Pod;
    expect(object.spec).toBe(cachedPod.spec);
    expect(object.metadata.annotations).toEqual({ touched: 'yes' });
    ctl.abort();
  });
});

describe('the informer does not give the hint yet; reflect() takes it', () => {
  /** Lists one pod, then records the options of each watch and holds it open. */
  function recording(seen: WatchOptions[]): ListerWatcher<Pod> {
    async function* open<E>(signal: AbortSignal): AsyncGenerator<E> {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    }
    return {
      supportsWatchList: false,
      list: (): Promise<ObjectList<Pod>> => Promise.resolve({ metadata: { resourceVersion: '1' }, items: [{ metadata: { name: 'a', namespace: 'default', resourceVersion: '1' } }] }),
      watch: (opts, signal) => {
        seen.push(opts);
        return open(signal);
      },
    };
  }

  it('an informer watches without it, whatever its options (its first burst of updates is slower with it, PF-50)', async () => {
    for (const opts of [{}, { transform: (pod: Pod) => pod }, { freeze: false }] as InformerOptions<Pod>[]) {
      const seen: WatchOptions[] = [];
      const sub = informer<Pod>(recording(seen), { onError: () => {}, ...opts }).subscribe(() => {});
      try {
        await waitFor(() => seen.length === 1, 'the watch to open');
        expect(seen[0]?.cached).toBeUndefined();
      } finally {
        sub.unsubscribe();
      }
    }
  });

  it('reflect() hands a lookup it is given to every watch', async () => {
    const seen: WatchOptions[] = [];
    const lookup = (): undefined => undefined;
    const sub = reflect<Pod>(recording(seen), { cached: lookup }).subscribe(() => {});
    try {
      await waitFor(() => seen.length === 1, 'the watch to open');
      expect(seen[0]?.cached).toBe(lookup);
    } finally {
      sub.unsubscribe();
    }
  });

  it('reflect() refuses a hint that is no function, naming it', () => {
    expect(() => reflect<Pod>(recording([]), { cached: 'yes' as never })).toThrow(/reflect: cached must be a function/);
    expect(() => reflect<Pod>(recording([]), { cached: null as never })).toThrow(/reflect: cached must be a function/);
  });
});
