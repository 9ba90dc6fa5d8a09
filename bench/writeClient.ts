// Writes to the simulator from one client, measured in a fresh process per
// client and round: rxkube's objectClient or client-node's CoreV1Api.
// Started by the writes benchmark; answers 'run' requests, one per case.

import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { objectClient } from 'rxkube';
import { serve } from './lib/ipc.js';

export type WriteClientMode = 'rxkube' | 'client-node';

export interface WriteArgs {
  readonly mode: WriteClientMode;
  readonly kubeConfigYaml: string;
  /** `create` makes `count` ConfigMaps named `<prefix>-<i>`; `patch` JSON-patches the ones a create case made. */
  readonly kind: 'create' | 'patch';
  readonly prefix: string;
  readonly count: number;
  /** Writes in flight at once. */
  readonly concurrency: number;
}

export interface WriteResult {
  readonly ms: number;
}

const NAMESPACE = 'default';

/** One write of the i-th object. */
type Write = (i: number) => Promise<unknown>;

function writer(args: WriteArgs): Write {
  const kc = new KubeConfig();
  kc.loadFromString(args.kubeConfigYaml);
  const name = (i: number): string => `${args.prefix}-${i}`;
  const ops = (i: number): object[] => [{ op: 'replace', path: '/data/n', value: String(i + 1) }];
  if (args.mode === 'rxkube') {
    const cms = objectClient(kc, 'v1/configmaps', { namespace: NAMESPACE });
    return args.kind === 'create' ? (i) => cms.create({ metadata: { name: name(i) }, data: { n: String(i) } } as never) : (i) => cms.patch(name(i), ops(i), { type: 'json' });
  }
  const api = kc.makeApiClient(CoreV1Api);
  return args.kind === 'create'
    ? (i) => api.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: name(i) }, data: { n: String(i) } } })
    : (i) => api.patchNamespacedConfigMap({ name: name(i), namespace: NAMESPACE, body: ops(i) });
}

async function run(args: WriteArgs): Promise<WriteResult> {
  const write = writer(args);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (next < args.count) await write(next++);
    }),
  );
  return { ms: performance.now() - t0 };
}

serve({ run: (args: WriteArgs) => run(args) });
