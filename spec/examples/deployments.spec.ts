import type { V1Deployment, V1Pod, V1ReplicaSet } from '@kubernetes/client-node';
import { describe, it } from 'vitest';
import { startApiServer } from 'rxkube/testing';
import { watchDeploymentReadiness } from '../../examples/deployments.js';
import { waitFor } from '../helpers/waitFor.js';

describe('examples/deployments', () => {
  it('prints each deployment with its pods readiness as pods, ReplicaSets and deployments change', async () => {
    const server = await startApiServer({ port: 0 });
    const lines: string[] = [];
    const running = watchDeploymentReadiness(server.kubeConfig(), (line) => lines.push(line), 50);
    const lastLineIs = (want: string): Promise<true> => waitFor(() => lines.at(-1) === want, `the line '${want}'`, 10_000, { describe: () => `last line: ${lines.at(-1)}` });
    try {
      const d = await server.create<V1Deployment>('apps/v1/deployments', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: { selector: {}, template: {} },
      });
      const rs = await server.create<V1ReplicaSet>('apps/v1/replicasets', {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: 'web-1',
          namespace: 'default',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata?.uid ?? '', controller: true }],
        },
        spec: { selector: {} },
      });
      const pod = (name: string, ready: boolean): V1Pod => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: 'default',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: rs.metadata?.uid ?? '', controller: true }],
        },
        spec: { containers: [{ name: 'main', image: 'busybox' }] },
        status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
      });
      await server.create('v1/pods', pod('a', true));
      await server.create('v1/pods', pod('b', false));
      await lastLineIs('default/web: 1/2 pods ready (waiting: default/b)');

      const b = server.get<V1Pod>('v1/pods', 'default', 'b');
      await server.update('v1/pods', { ...b, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      await lastLineIs('default/web: 2/2 pods ready');

      await server.delete('v1/pods', 'default', 'a');
      await lastLineIs('default/web: 1/1 pods ready');

      await server.delete('apps/v1/deployments', 'default', 'web');
      await lastLineIs('default/web: gone');
    } finally {
      await running.stop();
      await server.close();
    }
  });
});
