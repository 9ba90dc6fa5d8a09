// Builds AdmissionReview bodies as kube-apiserver sends them, for the admission specs.
import type { KubeObject } from '../../src/index.js';

export interface ReviewParts {
  readonly uid?: string;
  readonly operation?: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly kind?: { group: string; version: string; kind: string };
  readonly resource?: { group: string; version: string; resource: string };
  readonly object?: KubeObject | null;
  readonly oldObject?: KubeObject | null;
  readonly name?: string;
  readonly namespace?: string;
  readonly dryRun?: boolean;
  readonly userInfo?: { username?: string; groups?: string[] };
}

export const deploymentKind = { group: 'apps', version: 'v1', kind: 'Deployment' };
export const deploymentResource = { group: 'apps', version: 'v1', resource: 'deployments' };

export function deployment(name: string, replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop', uid: `uid-${name}` },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
    ...extra,
  } as KubeObject;
}

/** A review of a Deployment, as kube-apiserver sends it (JSON, so objects are plain data). */
export function review(parts: ReviewParts = {}): unknown {
  const operation = parts.operation ?? 'CREATE';
  const object = parts.object === undefined ? (operation === 'DELETE' ? null : deployment('web', 3)) : parts.object;
  const oldObject = parts.oldObject === undefined ? (operation === 'CREATE' ? null : deployment('web', 3)) : parts.oldObject;
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: parts.uid ?? '705ab4f5-6393-11e8-b7cc-42010a800002',
        kind: parts.kind ?? deploymentKind,
        resource: parts.resource ?? deploymentResource,
        requestKind: parts.kind ?? deploymentKind,
        requestResource: parts.resource ?? deploymentResource,
        name: parts.name ?? 'web',
        namespace: parts.namespace ?? 'shop',
        operation,
        userInfo: parts.userInfo ?? { username: 'alice', groups: ['system:authenticated'] },
        object,
        oldObject,
        dryRun: parts.dryRun ?? false,
        options: { apiVersion: 'meta.k8s.io/v1', kind: operation === 'DELETE' ? 'DeleteOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'CreateOptions' },
      },
    }),
  );
}

/** The response of a 200 answer. */
export function responseOf(answer: { status: number; body: unknown }): Record<string, any> {
  const body = answer.body as { apiVersion?: string; kind?: string; response?: Record<string, any> };
  if (answer.status !== 200 || body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview' || body.response === undefined) {
    throw new Error(`not a review answer: ${JSON.stringify(answer)}`);
  }
  return body.response;
}
