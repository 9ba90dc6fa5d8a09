// Realistic pods for the benchmarks: the shape a Deployment's pod has on a
// real cluster (labels, owner reference, probes, env, volumes, status with
// conditions and container statuses), about 3 KB of JSON each, generated
// deterministically so every run measures the same bytes.
//
// `storedPod` carries no managedFields; `wirePod` adds the two entries a real
// pod has (the ReplicaSet controller's and the kubelet's status writes), which
// make it 4–5 KB, the size the wire benchmarks use.

import type { V1Pod } from '@kubernetes/client-node';

const APPS = 97;
const NODES = 50;

/** A short, stable pseudo-random hex string for index `i` (pod-template-hash, suffixes). */
function hex(i: number, len: number): string {
  // 32-bit integer hash (lowbias32); good enough to look random and stay deterministic.
  let x = (i + 0x9e3779b9) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  return x.toString(16).padStart(8, '0').repeat(Math.ceil(len / 8)).slice(0, len);
}

function uid(i: number): string {
  const h = hex(i, 8) + hex(i + 1_000_003, 8) + hex(i + 2_000_003, 8) + hex(i + 3_000_003, 8);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Name of the i-th pod; unique for every i. */
export function podName(i: number): string {
  const app = `app-${i % APPS}`;
  return `${app}-${hex(i % APPS, 10)}-${hex(i, 5)}${i.toString(36)}`;
}

/** The app label value of the i-th pod. */
export function podApp(i: number): string {
  return `app-${i % APPS}`;
}

/**
 * The i-th pod as a client would create it: no uid, resourceVersion or
 * creationTimestamp (the server sets those).
 *
 * @param i Index; decides name, labels, node and IPs.
 * @param namespace Namespace of the pod.
 * @returns A fresh object.
 */
export function newPod(i: number, namespace: string): V1Pod {
  const app = podApp(i);
  const hash = hex(i % APPS, 10);
  const rs = `${app}-${hash}`;
  const node = `node-${String(i % NODES).padStart(3, '0')}.cluster.internal`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const hostIP = `192.168.${Math.floor((i % NODES) / 250)}.${(i % NODES) + 1}`;
  const image = `registry.example.com/team-${i % 7}/${app}:v1.${i % 13}.${i % 5}`;
  const started = '2026-11-20T10:00:00Z';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(i),
      namespace,
      generateName: `${rs}-`,
      labels: {
        app,
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/part-of': `system-${i % 11}`,
        'pod-template-hash': hash,
        tier: i % 3 === 0 ? 'frontend' : i % 3 === 1 ? 'backend' : 'worker',
      },
      annotations: {
        'kubectl.kubernetes.io/restartedAt': '2026-11-19T08:30:00Z',
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
      },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: uid(i % APPS), controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [
        {
          name: app,
          image,
          imagePullPolicy: 'IfNotPresent',
          ports: [
            { name: 'http', containerPort: 8080, protocol: 'TCP' },
            { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
          ],
          env: [
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
            { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: `${app}-db`, key: 'url' } } },
          ],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
          livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/app', readOnly: true },
            { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: node,
      securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000 },
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: started as unknown as Date },
        { type: 'Ready', status: 'True', lastTransitionTime: started as unknown as Date },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: started as unknown as Date },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: started as unknown as Date },
      ],
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: started as unknown as Date,
      containerStatuses: [
        {
          name: app,
          state: { running: { startedAt: started as unknown as Date } },
          ready: true,
          restartCount: i % 4,
          image,
          imageID: `registry.example.com/team-${i % 7}/${app}@sha256:${hex(i % 13, 64)}`,
          containerID: `containerd://${hex(i, 64)}`,
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

/**
 * The i-th pod as the server returns it: with uid, resourceVersion and
 * creationTimestamp.
 *
 * @param i Index.
 * @param namespace Namespace.
 * @param resourceVersion The object's resourceVersion.
 * @returns A fresh object.
 */
export function storedPod(i: number, namespace: string, resourceVersion: number): V1Pod {
  const pod = newPod(i, namespace);
  const meta = pod.metadata as Record<string, unknown>;
  meta.uid = uid(i + 7_000_001);
  meta.resourceVersion = String(resourceVersion);
  meta.creationTimestamp = '2026-11-20T09:59:58Z';
  return pod;
}

/** Namespace of the i-th pod when pods are spread over `count` namespaces. */
export function namespaceOf(i: number, count: number): string {
  return `team-${i % count}`;
}

/**
 * The managedFields a Deployment's pod carries on a real cluster: the
 * ReplicaSet controller's create and the kubelet's status updates.
 */
export function managedFieldsOf(pod: V1Pod): NonNullable<V1Pod['metadata']>['managedFields'] {
  const c = (pod.spec?.containers[0]?.name ?? 'app').replaceAll('"', '');
  const stamp = '2026-11-20T10:00:00Z' as unknown as Date;
  return [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: stamp,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': {
          'f:generateName': {},
          'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:tier': {} },
          'f:annotations': { '.': {}, 'f:prometheus.io/scrape': {} },
          'f:ownerReferences': { '.': {}, [`k:{"uid":"${pod.metadata?.ownerReferences?.[0]?.uid ?? ''}"}`]: {} },
        },
        'f:spec': {
          'f:containers': { [`k:{"name":"${c}"}`]: { '.': {}, 'f:env': {}, 'f:image': {}, 'f:livenessProbe': {}, 'f:name': {}, 'f:ports': {}, 'f:readinessProbe': {}, 'f:resources': {}, 'f:volumeMounts': {} } },
          'f:dnsPolicy': {},
          'f:restartPolicy': {},
          'f:securityContext': {},
          'f:volumes': {},
        },
      },
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: stamp,
      fieldsType: 'FieldsV1',
      subresource: 'status',
      fieldsV1: {
        'f:status': {
          'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } },
          'f:containerStatuses': {},
          'f:hostIP': {},
          'f:hostIPs': {},
          'f:phase': {},
          'f:podIP': {},
          'f:podIPs': { '.': {}, [`k:{"ip":"${pod.status?.podIP ?? ''}"}`]: { '.': {}, 'f:ip': {} } },
          'f:startTime': {},
        },
      },
    },
  ] as NonNullable<V1Pod['metadata']>['managedFields'];
}

/**
 * The i-th pod as a real API server returns it, about 4.3 KB of JSON:
 * {@link storedPod} without its tolerations and projected token volume, plus
 * its managedFields (a fifth of the bytes).
 */
export function wirePod(i: number, namespace: string, resourceVersion: number): V1Pod {
  const pod = storedPod(i, namespace, resourceVersion);
  const spec = pod.spec as NonNullable<V1Pod['spec']>;
  delete spec.tolerations;
  spec.volumes = spec.volumes?.filter((v) => v.projected === undefined);
  const container = spec.containers[0];
  if (container !== undefined) container.volumeMounts = container.volumeMounts?.filter((m) => m.name !== 'kube-api-access');
  (pod.metadata as Record<string, unknown>).managedFields = managedFieldsOf(pod);
  return pod;
}
