import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { sampleDeployment } from '../../examples/configmap-controller.js';
import type { Subscription } from 'rxjs';
import { controller, type Controller } from '../../src/controller/controller.js';
import type { ControllerOptions } from '../../src/controller/types.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { manager } from '../../src/manager/manager.js';
import type { ManagerEvent, ManagerOptions } from '../../src/manager/options.js';
import { kubeSource } from '../../src/sources/index.js';
import type { ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

/** A manager's subscription with what it emitted and how it ended. */
export interface Running {
  readonly events: ManagerEvent[];
  /** Set once the manager completed ('completed') or errored (the error). */
  ended: 'completed' | Error | undefined;
  readonly subscription: Subscription;
  /** The probe server's base URL, once it listens. */
  probes(): Promise<string>;
  /** Resolves how it ended. */
  end(timeoutMs?: number): Promise<'completed' | Error>;
  /** Aborts its signal (SIGTERM's job) and resolves how it ended. */
  stop(timeoutMs?: number): Promise<'completed' | Error>;
}

/** Subscribes a manager made with a signal of the harness's, so `stop()` ends it gracefully and can await it. */
export function start(opts: ManagerOptions): Running {
  const abort = new AbortController();
  const m = manager({ ...opts, signal: opts.signal === undefined ? abort.signal : AbortSignal.any([opts.signal, abort.signal]) });
  const events: ManagerEvent[] = [];
  const r: Running = {
    events,
    ended: undefined,
    subscription: undefined as unknown as Subscription,
    probes: async () => {
      const e = await waitFor(() => events.find((x) => x.type === 'serving' && x.server === 'probes'), 'the probe server to listen');
      return e.type === 'serving' ? e.url : '';
    },
    end: (timeoutMs = 10_000) => waitFor(() => r.ended, 'the manager to end', timeoutMs),
    stop: (timeoutMs) => {
      abort.abort();
      return r.end(timeoutMs);
    },
  };
  (r as { subscription: Subscription }).subscription = m.subscribe({
    next: (e) => events.push(e),
    complete: () => (r.ended = 'completed'),
    error: (err: unknown) => (r.ended = err as Error),
  });
  return r;
}

/** A deployment for the simulator. */
export const deployment = (name: string): V1Deployment => sampleDeployment(name, 1, 'nginx');

/** Informers with fast retries, and a controller over them; errors are collected instead of printed. */
export function deploymentsController(
  server: ApiServer,
  opts: Partial<ControllerOptions<V1Deployment>> = {},
): { ctl: Controller<V1Deployment>; deployments: Informer<V1Deployment>; configMaps: Informer<V1ConfigMap>; errors: Error[] } {
  const errors: Error[] = [];
  const fast = { backoff: { initialMs: 20, maxMs: 100 } };
  const deployments = informer(kubeSource(server.kubeConfig(), 'apps/v1/deployments'), { reflector: fast, onError: (e) => errors.push(e) });
  const configMaps = informer(kubeSource(server.kubeConfig(), 'v1/configmaps'), { reflector: fast, onError: (e) => errors.push(e) });
  const ctl = controller<V1Deployment>({
    for: deployments,
    owns: [{ source: configMaps, kind: 'Deployment', apiVersion: 'apps/v1' }],
    reconcile: () => undefined,
    onError: (e) => errors.push(e),
    ...opts,
  });
  return { ctl, deployments, configMaps, errors };
}
