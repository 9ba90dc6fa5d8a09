import { describe, expect, it } from 'vitest';
import { age, statusOf } from '../../src/cli/columns.js';
import { resolveResource } from '../../src/cli/resources.js';

describe('rxkube watch: resource names', () => {
  it.each([
    ['pods', 'v1/pods', 'Pod', true],
    ['po', 'v1/pods', 'Pod', true],
    ['Pod', 'v1/pods', 'Pod', true],
    ['v1/pods', 'v1/pods', 'Pod', true],
    ['deployments', 'apps/v1/deployments', 'Deployment', true],
    ['deploy', 'apps/v1/deployments', 'Deployment', true],
    ['apps/v1/deployments', 'apps/v1/deployments', 'Deployment', true],
    ['svc', 'v1/services', 'Service', true],
    ['ns', 'v1/namespaces', 'Namespace', false],
    ['nodes', 'v1/nodes', 'Node', false],
    ['events', 'v1/events', 'Event', true],
    ['hpa', 'autoscaling/v2/horizontalpodautoscalers', 'HorizontalPodAutoscaler', true],
    ['crd', 'apiextensions.k8s.io/v1/customresourcedefinitions', 'CustomResourceDefinition', false],
    ['leases', 'coordination.k8s.io/v1/leases', 'Lease', true],
  ] as const)('%s is %s', (name, ref, kind, namespaced) => {
    expect(resolveResource(name)).toMatchObject({ ref, kind, namespaced, builtIn: true });
  });

  it('a custom resource keeps its group, version and plural, with a kind from the plural', () => {
    expect(resolveResource('example.com/v1/widgets')).toEqual({
      ref: 'example.com/v1/widgets',
      group: 'example.com',
      version: 'v1',
      plural: 'widgets',
      kind: 'Widget',
      namespaced: true,
      builtIn: false,
    });
    expect(resolveResource('example.com/v1/policies').kind).toBe('Policy');
    expect(resolveResource('example.com/v1/boxes').kind).toBe('Box');
  });

  it.each([
    ['podz', /unknown resource "podz": not a built-in resource name/],
    ['v1/podz', /v1\/podz is not a built-in resource rxkube knows/],
    ['apps/v1/widgets', /apps\/v1\/widgets is not a built-in resource/],
    ['a/b/c/d', /expected version\/plural or group\/version\/plural/],
    ['Example.com/v1/Widgets', /in lower case/],
    ['', /unknown resource ""/],
  ])('%j is refused', (name, message) => {
    expect(() => resolveResource(name)).toThrow(message);
  });
});

describe('rxkube watch: columns', () => {
  it('a pod shows ready containers over all, and the first waiting reason over its phase', () => {
    const pod = (ready: boolean, waiting?: string) => ({
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'a', ready: true, state: { running: {} } },
          { name: 'b', ready, state: waiting === undefined ? { running: {} } : { waiting: { reason: waiting } } },
        ],
      },
    });
    expect(statusOf('Pod', pod(true))).toBe('2/2 Running');
    expect(statusOf('Pod', pod(false, 'CrashLoopBackOff'))).toBe('1/2 CrashLoopBackOff');
    expect(statusOf('Pod', { metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' }, spec: { containers: [{}] }, status: { phase: 'Running' } } as never)).toBe(
      '0/1 Terminating',
    );
  });

  it('workloads show ready replicas; nodes their Ready condition; unknown kinds their generation', () => {
    expect(statusOf('Deployment', { metadata: {}, spec: { replicas: 3 }, status: { readyReplicas: 2 } } as never)).toBe('2/3 ready');
    expect(statusOf('StatefulSet', { metadata: {}, spec: {}, status: {} } as never)).toBe('0/1 ready');
    expect(statusOf('Node', { metadata: {}, status: { conditions: [{ type: 'Ready', status: 'False' }] } } as never)).toBe('NotReady');
    expect(statusOf('Node', { metadata: {}, spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } as never)).toBe('Ready,SchedulingDisabled');
    expect(statusOf('Widget', { metadata: { generation: 4 } })).toBe('generation 4');
    expect(statusOf('Widget', { metadata: {} })).toBe('');
  });

  it('ages read like kubectl', () => {
    const now = Date.parse('2026-01-10T00:00:00Z');
    expect(age('2026-01-09T23:59:15Z', now)).toBe('45s');
    expect(age('2026-01-09T23:50:00Z', now)).toBe('10m');
    expect(age('2026-01-09T03:00:00Z', now)).toBe('21h');
    expect(age('2026-01-01T00:00:00Z', now)).toBe('9d');
    expect(age(undefined, now)).toBe('<unknown>');
    expect(age('not a date', now)).toBe('<unknown>');
  });
});
