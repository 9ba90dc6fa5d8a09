/**
 * `--simulator`: rxkube's API-server simulator, seeded with objects of the
 * watched resource spread over a few namespaces and kept changing by
 * `server.churn()`, so the command can be tried without a cluster; and
 * `rxkube simulator`, the simulator as a process of its own serving a
 * team's CRDs, for manual tests with kubectl or a program.
 */
import { writeFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ApiServer, Churn } from '../testing/index.js';
import { printable } from '../errors/printable.js';
import { loadCrds } from './crdFiles.js';
import { crdWebhookOptions } from './crdWebhookFlags.js';
import { interrupted } from './terminal.js';
import type { CliResource } from './resources.js';
import { UsageError } from './usage.js';

/** Options of {@link startSimulator}. */
export interface SimulatorOptions {
  /** Objects created before the command starts. */
  readonly objects: number;
  /** Writes per second once it runs; 0 for none. */
  readonly churnPerSecond: number;
  /** Seed of the churn's choices, so a run can be repeated. */
  readonly seed: number;
}

/** A running simulator. */
export interface Simulator {
  readonly server: ApiServer;
  readonly kc: KubeConfig;
  /** Starts the churn (after the initial list, so the first sync shows the seeded objects). */
  startChurn(): void;
  /** Stops the churn; the server keeps serving. */
  stopChurn(): void;
  /** Stops the churn and closes every connection and the listener. */
  close(): Promise<void>;
}

/** Where seeded objects live, with how many of every ten go there. */
const NAMESPACES: readonly (readonly [string, number])[] = [
  ['default', 4],
  ['web', 3],
  ['kube-system', 2],
  ['batch', 1],
];

/** Every ten seeded objects, the namespace of each: `default` four times, `web` three times, … */
const SLOTS = NAMESPACES.flatMap(([ns, weight]) => Array<string>(weight).fill(ns));

/** A running, ready pod (some not ready, so the status column varies). */
function pod(name: string, namespace: string, i: number): Record<string, unknown> {
  const ready = i % 7 !== 3;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: ['web', 'api', 'db', 'cache'][i % 4] as string } },
    spec: { nodeName: `node-${i % 4}`, containers: [{ name: 'app', image: 'registry.example/app:1.0' }] },
    status: {
      phase: ready ? 'Running' : 'Pending',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [
        { name: 'app', ready, restartCount: 0, image: 'registry.example/app:1.0', imageID: '', state: ready ? { running: {} } : { waiting: { reason: 'ContainerCreating' } } },
      ],
    },
  };
}

function seedObject(resource: CliResource, i: number): Record<string, unknown> {
  const namespace = resource.namespaced ? SLOTS[i % SLOTS.length] : undefined;
  const apiVersion = resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
  const name = `${resource.kind.toLowerCase()}-${i}`;
  if (resource.ref === 'v1/pods') return pod(name, namespace as string, i);
  const metadata = namespace === undefined ? { name, labels: { seed: String(i % 5) } } : { name, namespace, labels: { seed: String(i % 5) } };
  if (resource.ref === 'apps/v1/deployments' || resource.ref === 'apps/v1/statefulsets' || resource.ref === 'apps/v1/replicasets') {
    const replicas = 1 + (i % 3);
    return { apiVersion, kind: resource.kind, metadata, spec: { replicas, selector: { matchLabels: { seed: String(i % 5) } } }, status: { replicas, readyReplicas: i % 4 === 0 ? replicas - 1 : replicas } };
  }
  if (resource.ref === 'v1/nodes') return { apiVersion, kind: 'Node', metadata, status: { conditions: [{ type: 'Ready', status: i % 9 === 4 ? 'False' : 'True' }] } };
  if (resource.ref === 'v1/configmaps') return { apiVersion, kind: 'ConfigMap', metadata, data: { index: String(i) } };
  return { apiVersion, kind: resource.kind, metadata, spec: { value: 0 } };
}

/**
 * Starts the simulator on 127.0.0.1, serving `resource` (registered when the
 * simulator does not serve it by default), seeded with `objects` objects.
 *
 * @param resource what the command watches.
 * @param opts seed size, churn rate and seed.
 * @returns the running simulator.
 */
export async function startSimulator(resource: CliResource, opts: SimulatorOptions): Promise<Simulator> {
  // Loaded only when asked for: watching a real cluster never loads the simulator.
  const { startApiServer } = await import('../testing/index.js');
  const server = await startApiServer({ port: 0, bookmarkIntervalMs: 5_000, history: { maxEvents: 100_000 } });
  try {
    server.registerResource({ group: resource.group, version: resource.version, plural: resource.plural, kind: resource.kind, namespaced: resource.namespaced });
    for (let i = 0; i < opts.objects; i++) await server.create(resource.ref, seedObject(resource, i));
  } catch (err) {
    await server.close();
    throw err;
  }
  const churns: Churn[] = [];
  return {
    server,
    kc: server.kubeConfig(),
    startChurn() {
      if (opts.churnPerSecond <= 0 || churns.length > 0) return;
      // One churn per namespace, each with its share of the rate, running for an hour at most.
      const targets = resource.namespaced ? NAMESPACES : [['', 10] as const];
      for (const [namespace, weight] of targets) {
        const perSecond = (opts.churnPerSecond * weight) / 10;
        const ops = Math.ceil(perSecond * 3600);
        churns.push(
          server.churn({
            resource: resource.ref,
            ...(namespace === '' ? {} : { namespace }),
            creates: Math.ceil(ops * 0.3),
            updates: Math.ceil(ops * 0.5),
            deletes: Math.ceil(ops * 0.2),
            perSecond,
            namePrefix: `churn-${namespace === '' ? '' : `${namespace}-`}`,
            seed: opts.seed + churns.length,
          }),
        );
      }
    },
    stopChurn() {
      for (const churn of churns) churn.stop();
    },
    async close() {
      for (const churn of churns) churn.stop();
      await server.close();
    },
  };
}

/** Flags of `rxkube simulator`. */
export interface SimulatorCommandFlags {
  /** Files or modules whose CRDs are installed. */
  readonly crd?: readonly string[];
  /** The conversion webhook (`https://…/convert`) of the modules' definitions with converters; without it they convert nothing. */
  readonly webhookUrl?: string;
  /** The PEM CA the simulator trusts for `webhookUrl`. */
  readonly caBundleFile?: string;
  /** Where the kubeconfig for the running simulator is written. */
  readonly kubeconfigOut?: string;
  /** The port to listen on; 0 picks one. */
  readonly port: number;
}

/**
 * `rxkube simulator`: starts the simulator with the CRDs of every `--crd`,
 * writes its kubeconfig, prints one `ready` line, and serves until SIGINT or
 * SIGTERM (or `signal`).
 *
 * @param flags the command's flags.
 * @param signal ends the command when aborted (tests).
 * @returns the exit code.
 */
export async function runSimulatorCommand(flags: SimulatorCommandFlags, signal?: AbortSignal): Promise<number> {
  if (flags.caBundleFile !== undefined && flags.webhookUrl === undefined) throw new UsageError('--ca-bundle-file needs --webhook-url: it is the CA of that webhook');
  const webhook = crdWebhookOptions({ ...(flags.webhookUrl === undefined ? {} : { webhookUrl: flags.webhookUrl }), ...(flags.caBundleFile === undefined ? {} : { caBundleFile: flags.caBundleFile }) });
  const { crds, withoutConversion } = await loadCrds(flags.crd ?? [], webhook);
  for (const d of withoutConversion) {
    process.stderr.write(
      `rxkube simulator: ${d} has converters; its CRD is served with conversion None, so between versions only apiVersion changes. Pass --webhook-url https://127.0.0.1:<port>/convert (a running manager's webhook server) to convert through it\n`,
    );
  }
  const { startApiServer } = await import('../testing/index.js');
  let server: ApiServer;
  try {
    server = await startApiServer({ port: flags.port, crds });
  } catch (err) {
    if (err instanceof TypeError) throw new UsageError(`--crd: ${err.message.replace(/^startApiServer: crds\[(\d+)\]/, (_m, i: string) => `CRD ${Number(i) + 1}`)}`);
    throw err;
  }
  try {
    if (flags.kubeconfigOut !== undefined) await writeFile(flags.kubeconfigOut, server.kubeConfigYaml(), { mode: 0o600 });
    const served = crds.length === 1 ? '1 CRD' : `${crds.length} CRDs`;
    const where = flags.kubeconfigOut === undefined ? '' : `; kubeconfig written to ${printable(flags.kubeconfigOut)}`;
    process.stdout.write(`rxkube simulator ready at ${server.url} with ${served}${where}\n`);
    await interrupted(signal ?? new AbortController().signal);
  } finally {
    await server.close();
  }
  return 0;
}
