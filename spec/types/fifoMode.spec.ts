import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { informer, InformerFactory, kubeSource, multiClusterInformer, type FifoMode, type InformerOptions, type ClusterProvider } from '../../src/index.js';
import { orderedFifo, reflect, type OrderedFifoItem, type ReplacedAll, type SyncAll, type Deltas, type MultiClusterInformerOptions } from '../../src/core.js';


// Checked by `tsc`: each @ts-expect-error must be an error. The calls sit in functions that are never run.

describe("the informer's fifo option is a closed set of names", () => {
  it("takes 'perKey' or 'ordered' and nothing else, wherever informer options are accepted", () => {
    const calls = (kc: KubeConfig, clusters: ClusterProvider): void => {
      const pods = kubeSource(kc, 'v1/pods');
      informer(pods, { fifo: 'ordered' });
      informer(pods, { fifo: 'perKey' });
      // @ts-expect-error not a mode
      informer(pods, { fifo: 'inOrder' });
      // @ts-expect-error a mode is a name, not a flag
      informer(pods, { fifo: true });
      new InformerFactory(kc).informerFor('v1/pods', { fifo: 'ordered' });
      // @ts-expect-error the factory re-types the same option
      new InformerFactory(kc).informerFor('v1/pods', { fifo: 'atomic' });
      multiClusterInformer(clusters, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { fifo: 'ordered' });
      // @ts-expect-error so does the multi-cluster informer
      multiClusterInformer(clusters, (c) => kubeSource(c.kubeConfig, 'v1/pods'), { fifo: 'realFifo' });
    };
    expectTypeOf(calls).toBeFunction();
    expectTypeOf<FifoMode>().toEqualTypeOf<'perKey' | 'ordered'>();
    expectTypeOf<InformerOptions<unknown>['fifo']>().toEqualTypeOf<FifoMode | undefined>();
    expectTypeOf<MultiClusterInformerOptions<unknown>['fifo']>().toEqualTypeOf<FifoMode | undefined>();
  });

  it('orderedFifo emits single events, whole lists and whole resyncs, told apart by their shape', () => {
    const calls = (kc: KubeConfig): void => {
      reflect(kubeSource(kc, 'v1/pods'))
        .pipe(orderedFifo())
        .subscribe((item) => {
          if ('deltas' in item) expectTypeOf(item).toEqualTypeOf<Deltas<import('@kubernetes/client-node').V1Pod>>();
          else if (item.type === 'ReplacedAll') expectTypeOf(item.items).toEqualTypeOf<readonly import('@kubernetes/client-node').V1Pod[]>();
          else expectTypeOf(item).toEqualTypeOf<SyncAll>();
        });
      // @ts-expect-error orderedFifo has no emitDeltaTypeReplaced: a relist is one ReplacedAll
      orderedFifo({ emitDeltaTypeReplaced: true });
    };
    expectTypeOf(calls).toBeFunction();
    expectTypeOf<OrderedFifoItem<unknown>>().toEqualTypeOf<Deltas<unknown> | ReplacedAll<unknown> | SyncAll>();
  });
});
