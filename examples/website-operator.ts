/**
 * An operator for a custom resource of its own: each `Website` (group
 * example.com) gets a Deployment running its image and a Service in front of
 * it, both owned by the Website, and the Website's status says how many
 * replicas are ready and whether it is `Ready`.
 *
 * Everything about the custom resource comes from one schema: the
 * TypeScript type, the CRD (`rxkube crd generate examples/website-operator.ts`),
 * validation, the typed informer and client, and the simulator enforcing it.
 *
 *   npm run example website-operator                    # the current kubeconfig context; the CRD must be installed
 *   npm run example website-operator -- --simulator     # the built-in API server, with the CRD installed and two Websites
 *
 * In a pod (examples/deploy/website-operator.yaml) it serves `/metrics` at `--metrics-bind-address` and
 * `/healthz`, `/readyz` at `--health-probe-bind-address`; both are off (`0`) unless given, so a run on a
 * workstation takes no ports.
 *
 * It prints one line per reconcile, e.g. `reconciled default/blog: 2/2 ready`.
 */
import type { KubeConfig, V1Deployment, V1Service } from '@kubernetes/client-node';
import { z } from 'zod';
import {
  controller,
  customResource,
  generationChanged,
  informer,
  kubeSource,
  metaNamespaceKey,
  objectClient,
  ownerReference,
  runManager,
  setCondition,
  type ManagerEvent,
  type ApplyConfiguration,
  type Controller,
  type Informer,
} from 'rxkube';
import { prometheusMetrics } from 'rxkube/metrics';
import { conditions } from 'rxkube/zod';
import type { ApiServer } from 'rxkube/testing';
import { exampleCluster } from './lib/cluster.ts';

/** The custom resource: one definition gives its type, its CRD, validation and typed clients. */
export const Website = customResource({
  group: 'example.com',
  version: 'v1',
  kind: 'Website',
  shortNames: ['ws'],
  categories: ['all'],
  spec: z.object({
    image: z.string().min(1),
    replicas: z.number().int().min(0).max(50).default(1),
    port: z.number().int().min(1).max(65535).default(80),
  }),
  status: z.object({
    readyReplicas: z.number().int().min(0).optional(),
    conditions: conditions().optional(),
  }),
  printerColumns: [
    { name: 'Image', type: 'string', jsonPath: '.spec.image' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  ],
  subresources: { status: true, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' } },
});
/** A Website object, as the server stores it (defaults applied). */
export type Website = typeof Website.Type;

const MANAGER = 'website-operator';

/** The Deployment a Website needs: only the fields this operator has an opinion on. */
export function desiredDeployment(w: Website): ApplyConfiguration<V1Deployment> {
  const name = w.metadata.name ?? '';
  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': MANAGER };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: w.metadata.namespace, labels, ownerReferences: [ownerReference(w, { controller: true, blockOwnerDeletion: true })] },
    spec: {
      replicas: w.spec.replicas,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: w.spec.image, ports: [{ containerPort: w.spec.port }] }] } },
    },
  };
}

/** The Service in front of a Website's pods. */
export function desiredService(w: Website): ApplyConfiguration<V1Service> {
  const name = w.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: w.metadata.namespace, labels: { 'app.kubernetes.io/managed-by': MANAGER }, ownerReferences: [ownerReference(w, { controller: true, blockOwnerDeletion: true })] },
    spec: { selector: { 'app.kubernetes.io/name': name }, ports: [{ port: 80, targetPort: w.spec.port }] },
  };
}

/** Whether a Website's status says what its Deployment shows; undefined when it does. */
export function desiredStatus(w: Website, d: V1Deployment | undefined): Website['status'] {
  const ready = d?.status?.readyReplicas ?? 0;
  const isReady = d !== undefined && ready >= w.spec.replicas;
  const conditions = setCondition(w.status?.conditions, {
    type: 'Ready',
    status: isReady ? 'True' : 'False',
    reason: d === undefined ? 'DeploymentMissing' : isReady ? 'ReplicasReady' : 'ReplicasStarting',
    message: `${ready}/${w.spec.replicas} replicas ready`,
    observedGeneration: w.metadata.generation,
  });
  return { readyReplicas: ready, conditions };
}

/** A running operator and the informers it reads. */
export interface WebsiteOperator {
  readonly controller: Controller<Website>;
  readonly websites: Informer<Website>;
  readonly deployments: Informer<V1Deployment>;
}

/**
 * Builds the operator; subscribing to `controller` (or giving it to the runner) runs it.
 *
 * @param kc the cluster.
 * @param opts a signal that stops it, and a line printer for each reconcile.
 * @returns the controller and its informers.
 */
export function websiteOperator(kc: KubeConfig, opts: { signal?: AbortSignal; log?: (line: string) => void } = {}): WebsiteOperator {
  const managed = { labelSelector: `app.kubernetes.io/managed-by=${MANAGER}` };
  const websites = informer(kubeSource(kc, Website));
  const deployments = informer(kubeSource(kc, 'apps/v1/deployments', managed));
  const services = informer(kubeSource(kc, 'v1/services', managed));
  // No namespace on the clients: each write goes to its object's metadata.namespace.
  const websiteClient = objectClient(kc, Website, { fieldManager: MANAGER });
  const deploymentClient = objectClient(kc, 'apps/v1/deployments', { fieldManager: MANAGER });
  const serviceClient = objectClient(kc, 'v1/services', { fieldManager: MANAGER });
  const owner = { kind: Website.kind, apiVersion: Website.apiVersion };
  const ctl = controller({
    // Only spec changes (a new generation) wake it: its own status writes do not.
    for: { source: websites, predicates: [generationChanged] },
    owns: [{ source: deployments, ...owner }, { source: services, ...owner }],
    signal: opts.signal,
    reconcile: async (w, ctx) => {
      await deploymentClient.apply(desiredDeployment(w), { force: true, signal: ctx.signal });
      await serviceClient.apply(desiredService(w), { force: true, signal: ctx.signal });
      const status = desiredStatus(w, deployments.store.getByKey(metaNamespaceKey(w)));
      if (JSON.stringify(status) !== JSON.stringify(w.status)) {
        await websiteClient.applyStatus({ apiVersion: Website.apiVersion, kind: Website.kind, metadata: { name: w.metadata.name ?? '', namespace: w.metadata.namespace }, status }, { force: true, signal: ctx.signal });
      }
      opts.log?.(`reconciled ${ctx.key}: ${status?.readyReplicas ?? 0}/${w.spec.replicas} ready`);
      return undefined;
    },
  });
  return { controller: ctl, websites, deployments };
}

/** A Website for the simulator. */
export function sampleWebsite(name: string, image: string, replicas?: number, namespace = 'default'): Website {
  return { apiVersion: Website.apiVersion, kind: Website.kind, metadata: { name, namespace }, spec: { image, replicas: replicas ?? 1, port: 80 } };
}

/**
 * What is wrong between the Websites and what they own, as the server has them: a Website without its
 * Deployment or Service, a Deployment that runs another image or replica count, a status that is not `Ready`.
 * Empty when the operator has converged.
 *
 * @param websites every Website.
 * @param deployments every Deployment the operator manages.
 * @param services every Service the operator manages.
 * @returns one line per problem.
 */
export function convergenceProblems(websites: readonly Website[], deployments: readonly V1Deployment[], services: readonly V1Service[]): string[] {
  const problems: string[] = [];
  const byKey = <T extends { metadata?: { name?: string; namespace?: string } }>(xs: readonly T[]): Map<string, T> => new Map(xs.map((x) => [`${x.metadata?.namespace}/${x.metadata?.name}`, x]));
  const ds = byKey(deployments);
  const ss = byKey(services);
  for (const w of websites) {
    const key = metaNamespaceKey(w);
    const d = ds.get(key);
    if (d === undefined) problems.push(`${key} has no Deployment`);
    else if (d.spec?.replicas !== w.spec.replicas || d.spec?.template?.spec?.containers?.[0]?.image !== w.spec.image) problems.push(`${key}'s Deployment runs ${d.spec?.replicas} × ${d.spec?.template?.spec?.containers?.[0]?.image}`);
    if (!ss.has(key)) problems.push(`${key} has no Service`);
    const ready = w.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True' || ready.observedGeneration !== w.metadata.generation) problems.push(`${key} is not Ready (${ready?.reason ?? 'no condition'})`);
  }
  return problems;
}

/**
 * On the simulator (or an API server without a controller-manager) nothing runs the Deployments' pods: this
 * plays the Deployment controller's part and reports every replica ready, so the Websites can become `Ready`.
 *
 * @param kc the cluster.
 * @returns the subscription that plays it; unsubscribe to stop.
 */
export function playDeploymentController(kc: KubeConfig): { unsubscribe(): void } {
  const deployments = objectClient(kc, 'apps/v1/deployments', { fieldManager: 'deployment-controller' });
  return informer(kubeSource(kc, 'apps/v1/deployments')).subscribe((e) => {
    if (e.type === 'delete') return;
    const d = e.obj;
    const replicas = d.spec?.replicas ?? 1;
    if (d.status?.readyReplicas === replicas && d.status.observedGeneration === d.metadata?.generation) return;
    const status = { replicas, readyReplicas: replicas, availableReplicas: replicas, observedGeneration: d.metadata?.generation };
    deployments.applyStatus({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: d.metadata?.name ?? '', namespace: d.metadata?.namespace }, status }, { force: true }).catch((err: unknown) => {
      console.error(`simulated deployment controller: ${String(err)}`);
    });
  });
}

if ((import.meta as { main?: boolean }).main) {
  const cluster = await exampleCluster(
    process.argv.slice(2),
    async (server) => {
      await server.create(Website, sampleWebsite('blog', 'nginx:1.27', 2));
      await server.create(Website, sampleWebsite('shop', 'shop:3.1', 3));
    },
    { 'metrics-bind-address': '0', 'health-probe-bind-address': '0', 'service-account-dir': '' },
    { crds: [Website.crd()] },
  );
  const { kc, flags } = cluster;
  const stop = new AbortController();
  const running = websiteOperator(kc, { signal: stop.signal, log: (line) => console.log(line) });
  const played = cluster.simulator === undefined ? undefined : playDeploymentController(kc);
  const describe = (e: ManagerEvent): string | undefined =>
    e.type === 'serving' ? `serving ${e.server} on ${e.url}` : e.type === 'stopping' ? `stopping: ${e.reason}` : e.type === 'reconcile' && e.outcome.type === 'failed' ? `failed ${e.outcome.key}: ${e.outcome.error.message}` : undefined;
  const exit = runManager({
    controllers: [running.controller],
    metrics: prometheusMetrics(),
    metricsBindAddress: flags['metrics-bind-address'],
    healthProbeBindAddress: flags['health-probe-bind-address'],
    signal: stop.signal,
    onEvent: (e) => {
      const line = describe(e);
      if (line !== undefined) console.log(line);
    },
  });
  const ended = await Promise.race([exit, cluster.done]);
  const code = typeof ended === 'number' ? ended : undefined;
  const simulator: ApiServer | undefined = cluster.simulator;
  if (simulator !== undefined) {
    const problems = (): string[] =>
      convergenceProblems(simulator.list<Website>(Website), simulator.list<V1Deployment>('apps/v1/deployments'), simulator.list<V1Service>('v1/services'));
    // After --duration (not after Ctrl-C), the operator gets up to 30 s more to finish what it started before it is judged.
    for (const deadline = Date.now() + 30_000; ended === 'duration' && problems().length > 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    const left = problems();
    console.log(left.length === 0 ? `converged: ${simulator.list(Website).length} websites, each with its Deployment and Service, Ready` : `not converged: ${left.join('; ')}`);
  }
  stop.abort();
  const exitCode = code ?? (await exit);
  played?.unsubscribe();
  await cluster.close();
  process.exit(exitCode);
}
