/**
 * The table's columns: what kubectl would show in its STATUS-like column for
 * each kind, and ages in kubectl's short form.
 */
import type { KubeObject } from '../store/types.js';

/** Any object as the view reads it: metadata plus whatever spec and status the kind has. */
type Obj = KubeObject & { readonly spec?: Record<string, unknown>; readonly status?: Record<string, unknown>; readonly [field: string]: unknown };

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const arr = (v: unknown): readonly Record<string, unknown>[] => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);

/** `2/3 Running`, with the first waiting reason (`CrashLoopBackOff`) when a container is not running. */
function podStatus(pod: Obj): string {
  const containers = arr(pod.spec?.['containers']).length;
  const statuses = arr(pod.status?.['containerStatuses']);
  const ready = statuses.filter((s) => s['ready'] === true).length;
  const waiting = statuses.map((s) => str((s['state'] as Record<string, Record<string, unknown>> | undefined)?.['waiting']?.['reason'])).find((r) => r !== undefined);
  const phase = pod.metadata?.deletionTimestamp !== undefined ? 'Terminating' : (waiting ?? str(pod.status?.['phase']) ?? 'Unknown');
  return `${ready}/${containers} ${phase}`;
}

/** Ready replicas over desired ones, as `kubectl get deploy` and `get sts` show them. */
function replicas(obj: Obj): string {
  const desired = typeof obj.spec?.['replicas'] === 'number' ? num(obj.spec['replicas']) : 1;
  return `${num(obj.status?.['readyReplicas'])}/${desired} ready`;
}

function condition(obj: Obj, type: string): string | undefined {
  return str(arr(obj.status?.['conditions']).find((c) => c['type'] === type)?.['status']);
}

/** Each kind's status column; kinds without one show their generation. */
const STATUS: Readonly<Record<string, (obj: Obj) => string>> = {
  Pod: podStatus,
  Deployment: replicas,
  StatefulSet: replicas,
  ReplicaSet: replicas,
  ReplicationController: replicas,
  DaemonSet: (ds) => `${num(ds.status?.['numberReady'])}/${num(ds.status?.['desiredNumberScheduled'])} ready`,
  Node: (node) => {
    const ready = condition(node, 'Ready');
    const state = ready === 'True' ? 'Ready' : ready === undefined ? 'Unknown' : 'NotReady';
    return node.spec?.['unschedulable'] === true ? `${state},SchedulingDisabled` : state;
  },
  Namespace: (ns) => str(ns.status?.['phase']) ?? 'Active',
  Service: (svc) => `${str(svc.spec?.['type']) ?? 'ClusterIP'} ${str(svc.spec?.['clusterIP']) ?? ''}`.trim(),
  Job: (job) => {
    const done = condition(job, 'Complete') === 'True' ? 'Complete' : condition(job, 'Failed') === 'True' ? 'Failed' : 'Running';
    return `${num(job.status?.['succeeded'])}/${typeof job.spec?.['completions'] === 'number' ? job.spec['completions'] : 1} ${done}`;
  },
  CronJob: (cj) => `${str(cj.spec?.['schedule']) ?? ''}${cj.spec?.['suspend'] === true ? ' (suspended)' : ''}`,
  ConfigMap: (cm) => `${Object.keys((cm['data'] as object | undefined) ?? {}).length} keys`,
  Secret: (s) => `${str(s['type']) ?? 'Opaque'}, ${Object.keys((s['data'] as object | undefined) ?? {}).length} keys`,
  Lease: (lease) => `holder ${str(lease.spec?.['holderIdentity']) ?? '<none>'}`,
  PersistentVolumeClaim: (pvc) => str(pvc.status?.['phase']) ?? 'Pending',
  PersistentVolume: (pv) => str(pv.status?.['phase']) ?? 'Pending',
  Event: (ev) => `${str(ev['type']) ?? ''} ${str(ev['reason']) ?? ''}`.trim(),
};

/**
 * The status column of one object.
 *
 * @param kind the resource's kind (`Pod`).
 * @param obj the object.
 * @returns a short status, e.g. `1/1 Running`, `2/3 ready` or `Ready (Reconciled)`.
 */
export function statusOf(kind: string, obj: KubeObject): string {
  const o = obj as Obj;
  const column = STATUS[kind];
  if (column !== undefined) return column(o);
  // The convention custom resources follow (and controllers built on rxkube write): a Ready condition, with its
  // reason in brackets, says more than a generation.
  const ready = arr(o.status?.['conditions']).find((c) => c['type'] === 'Ready');
  if (ready === undefined) return o.metadata?.generation === undefined ? '' : `generation ${o.metadata.generation}`;
  const state = ready['status'] === 'True' ? 'Ready' : ready['status'] === 'False' ? 'NotReady' : 'Unknown';
  const reason = str(ready['reason']);
  return reason === undefined || reason === '' ? state : `${state} (${reason})`;
}

/**
 * kubectl's short age: `42s`, `5m`, `3h`, `12d`.
 *
 * @param since an RFC 3339 timestamp (or a Date), or undefined.
 * @param now the current time in ms.
 * @returns the age, or `<unknown>`.
 */
export function age(since: string | Date | undefined, now: number): string {
  if (since === undefined) return '<unknown>';
  const at = since instanceof Date ? since.getTime() : Date.parse(since);
  if (Number.isNaN(at)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - at) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/**
 * A duration in a compact human form: `850ms`, `1.2s`, `3m05s`.
 *
 * @param ms milliseconds.
 * @returns the text.
 */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
