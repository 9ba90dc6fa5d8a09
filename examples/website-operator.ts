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
 * It also serves its webhooks (`--webhook-bind-address`): a validating and a mutating one for Websites, and the
 * conversion between v1 and v2. In a pod (examples/deploy/website-operator.yaml) their certificate is provisioned
 * for the Service `--webhook-service`; on the simulator they are served on 127.0.0.1 and registered there, and
 * the program shows one Website refused and one converted. `/metrics` is at `--metrics-bind-address` (over HTTPS
 * and behind the API server's authentication with `--metrics-secure`), `/healthz`, `/readyz` at
 * `--health-probe-bind-address`; all are off (`0`) unless given, so a run on a workstation takes no ports.
 *
 * It prints one line per reconcile, e.g. `reconciled default/blog: 2/2 ready`.
 */
import type { KubeConfig, V1Deployment, V1Service } from '@kubernetes/client-node';
import { z } from 'zod';
import {
  admission,
  controller,
  customResource,
  generationChanged,
  informer,
  KubeApiError,
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
import { exampleCluster, namespacedName } from './lib/cluster.ts';
import { freeLoopbackPort, loopbackCerts, registerLoopbackWebhooks, simulatedScrapers } from './lib/loopbackWebhooks.ts';

const websiteStatus = z.object({
  readyReplicas: z.number().int().min(0).optional(),
  conditions: conditions().optional(),
});
const subresources = { status: true, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' } } as const;

/**
 * The custom resource: one definition gives its type, its CRD, validation and typed clients. Version v1 is the one
 * the operator works with and stores; v2 names the image by repository and tag, and the conversion webhook
 * (`admission.conversion(Website)`) turns one into the other.
 */
export const Website = customResource({
  group: 'example.com',
  kind: 'Website',
  shortNames: ['ws'],
  categories: ['all'],
  versions: {
    v1: {
      storage: true,
      spec: z.object({
        image: z.string().min(1),
        replicas: z.number().int().min(0).max(50).default(1),
        port: z.number().int().min(1).max(65535).default(80),
      }),
      status: websiteStatus,
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.image' },
        { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
      ],
      subresources,
    },
    v2: {
      spec: z.object({
        // No colon after the last slash: a registry's port may have one, the tag goes in `tag`.
        repository: z.string().min(1).regex(/^(.*\/)?[^:/]+$/),
        tag: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/).optional(),
        replicas: z.number().int().min(0).max(50).default(1),
        port: z.number().int().min(1).max(65535).default(80),
      }),
      status: websiteStatus,
      printerColumns: [
        { name: 'Repository', type: 'string', jsonPath: '.spec.repository' },
        { name: 'Tag', type: 'string', jsonPath: '.spec.tag' },
        { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
      ],
      subresources,
    },
  },
  conversion: {
    v2: {
      toStorage: (w) => ({ ...w, apiVersion: 'example.com/v1', spec: specToV1(w.spec) }),
      fromStorage: (w) => ({ ...w, apiVersion: 'example.com/v2', spec: specToV2(w.spec) }),
    },
  },
});
/** A Website object, as the server stores it (defaults applied). */
export type Website = typeof Website.Type;
/** A Website as version v2 shows it. */
export type WebsiteV2 = typeof WebsiteV2.Type;
/** The v2 view of the definition: its type, validator and typed clients (`Website.forVersion('v2')`; not exported, as one module exports each custom resource once). */
const WebsiteV2 = Website.forVersion('v2');

/** A v1 spec as the converters see it. */
interface SpecV1 {
  readonly image: string;
  readonly replicas: number;
  readonly port: number;
}

/** A v2 spec as the converters see it. */
interface SpecV2 {
  readonly repository: string;
  readonly tag?: string | undefined;
  readonly replicas: number;
  readonly port: number;
}

/** `nginx:1.27` as repository and tag: the tag is what follows the last colon after the last slash, if any. */
function specToV2({ image, ...rest }: SpecV1): SpecV2 {
  const colon = image.lastIndexOf(':');
  return colon > image.lastIndexOf('/') ? { repository: image.slice(0, colon), tag: image.slice(colon + 1), ...rest } : { repository: image, ...rest };
}

/** Repository and tag joined into the image. */
function specToV1({ repository, tag, ...rest }: SpecV2): SpecV1 {
  return { image: tag === undefined ? repository : `${repository}:${tag}`, ...rest };
}

/** A v1 Website as v2 shows it: the image split into repository and tag. */
export function websiteToV2(w: Website): WebsiteV2 {
  return { ...w, apiVersion: 'example.com/v2', spec: specToV2(w.spec) };
}

/** A v2 Website as v1 stores it: repository and tag joined into the image. */
export function websiteFromV2(w: WebsiteV2): Website {
  return { ...w, apiVersion: 'example.com/v1', spec: specToV1(w.spec) };
}

/** The most replicas a Website may ask for unless its writer is in the `admins` group. */
export const MAX_REPLICAS = 10;

/** Refuses a Website that asks for more than {@link MAX_REPLICAS} replicas (unless an admin writes it) or runs `:latest`. */
export const validateWebsite = admission.validating(Website, ({ object, userInfo }) =>
  object.spec.replicas > MAX_REPLICAS && !userInfo.groups?.includes('admins')
    ? admission.deny(`spec.replicas: at most ${MAX_REPLICAS} for non-admins, got ${object.spec.replicas}`, { field: 'spec.replicas' })
    : object.spec.image.endsWith(':latest')
      ? admission.deny('spec.image: pin a version instead of :latest', { field: 'spec.image' })
      : admission.allow(),
);

/** Defaults what the schema cannot: the `app.kubernetes.io/name` label, the Website's name unless set. */
export const defaultWebsite = admission.mutating(Website, ({ object, name }) => ({
  ...object,
  metadata: { ...object.metadata, labels: { 'app.kubernetes.io/name': object.metadata.name ?? name, ...object.metadata.labels } },
}));

/** Serves the ConversionReviews of Websites between v1 and v2. */
export const convertWebsite = admission.conversion(Website);

/** Every webhook the operator serves: `rxkube manifests examples/website-operator.ts` registers them. */
export const webhooks = [validateWebsite, defaultWebsite, convertWebsite];

const MANAGER = 'website-operator';
/** The webhook configurations' name (website-webhooks.yaml), and the Secret's prefix of provisioned certificates. */
export const WEBHOOKS_NAME = 'website-operator';
/** The Service the API server calls the webhooks through in a cluster (examples/deploy/website-service.yaml). */
export const WEBHOOK_SERVICE = { namespace: 'website-operator', name: 'website-operator-webhook' } as const;

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

/**
 * On the simulator, once the webhooks are served: registers them, then writes a Website as v2 and one that asks
 * for too many replicas, and prints what the server made of each.
 */
async function showWebhooks(kc: KubeConfig, port: number, caBundle: string): Promise<void> {
  await registerLoopbackWebhooks(kc, { name: WEBHOOKS_NAME, webhooks, port, caBundle });
  const v2 = objectClient(kc, WebsiteV2, { namespace: 'default', fieldManager: 'example' });
  await v2.create({ apiVersion: 'example.com/v2', kind: 'Website', metadata: { name: 'docs' }, spec: { repository: 'docs', tag: '2.0', replicas: 1, port: 80 } });
  const stored = await objectClient(kc, Website, { namespace: 'default' }).get('docs');
  console.log(`webhooks: default/docs written as example.com/v2 reads as ${stored.apiVersion} with image ${stored.spec.image} and label app.kubernetes.io/name=${stored.metadata.labels?.['app.kubernetes.io/name']}`);
  try {
    await objectClient(kc, Website, { namespace: 'default' }).create(sampleWebsite('huge', 'nginx:1.27', 20));
    console.log('webhooks: default/huge was accepted');
  } catch (e) {
    console.log(`webhooks: default/huge refused: ${e instanceof KubeApiError ? e.serverMessage : String(e)}`);
  }
}

if ((import.meta as { main?: boolean }).main) {
  const simulated = process.argv.includes('--simulator');
  // On the simulator the webhooks are served on 127.0.0.1 with a certificate made here, the CRD's conversion
  // webhook at a URL; in a cluster, behind --webhook-service with provisioned certificates.
  const certs = simulated ? await loopbackCerts() : undefined;
  const port = simulated ? await freeLoopbackPort() : 0;
  const crd = Website.crd({ conversionWebhook: { url: `https://127.0.0.1:${port}/convert` }, caBundle: certs?.caBundle });
  const cluster = await exampleCluster(
    process.argv.slice(2),
    async (server) => {
      await server.create(Website, sampleWebsite('blog', 'nginx:1.27', 2));
      await server.create(Website, sampleWebsite('shop', 'shop:3.1', 3));
    },
    { 'metrics-bind-address': '0', 'metrics-secure': 'false', 'health-probe-bind-address': '0', 'webhook-bind-address': '0', 'webhook-service': '', 'service-account-dir': '' },
    { crds: [crd], ...simulatedScrapers },
  );
  const { kc, flags } = cluster;
  const stop = new AbortController();
  const running = websiteOperator(kc, { signal: stop.signal, log: (line) => console.log(line) });
  const played = cluster.simulator === undefined ? undefined : playDeploymentController(kc);
  const describe = (e: ManagerEvent): string | undefined =>
    e.type === 'serving' ? `serving ${e.server} on ${e.url}` : e.type === 'stopping' ? `stopping: ${e.reason}` : e.type === 'reconcile' && e.outcome.type === 'failed' ? `failed ${e.outcome.key}: ${e.outcome.error.message}` : undefined;
  const served = flags['webhook-bind-address'] !== '0' || certs !== undefined;
  let shown: Promise<void> | undefined;
  const exit = runManager({
    controllers: [running.controller],
    metrics: prometheusMetrics(),
    metricsBindAddress: flags['metrics-bind-address'],
    ...(flags['metrics-secure'] === 'true' ? { metricsSecure: { kubeConfig: kc } } : {}),
    healthProbeBindAddress: flags['health-probe-bind-address'],
    ...(!served
      ? {}
      : certs !== undefined
        ? { webhooks, webhookBindAddress: `127.0.0.1:${port}`, webhookCertDir: certs.certDir }
        : {
            webhooks,
            webhookBindAddress: flags['webhook-bind-address'],
            webhookCertificates: { kubeConfig: kc, name: WEBHOOKS_NAME, service: namespacedName('webhook-service', flags['webhook-service']), customResources: [Website] },
          }),
    signal: stop.signal,
    onEvent: (e) => {
      const line = describe(e);
      if (line !== undefined) console.log(line);
      if (e.type === 'serving' && e.server === 'webhooks' && certs !== undefined) shown = showWebhooks(kc, port, certs.caBundle);
    },
  });
  const ended = await Promise.race([exit, cluster.done]);
  const code = typeof ended === 'number' ? ended : undefined;
  await shown;
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
  certs?.remove();
  process.exit(exitCode);
}
