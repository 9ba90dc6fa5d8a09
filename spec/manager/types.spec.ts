import { describe, expectTypeOf, it } from 'vitest';
import type { KubeConfig, V1ConfigMap, V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import { controller, type Controller } from '../../src/controller/controller.js';
import { informer, type Informer } from '../../src/informer/informer.js';
import { leaseLock } from '../../src/leaderelection/leaseLock.js';
import { manager } from '../../src/manager/manager.js';
import type { ManagerEvent, ManagerMetrics } from '../../src/manager/options.js';
import { runManager } from '../../src/manager/runManager.js';
import type { Webhook } from '../../src/admission/types.js';
import { certDirPairs } from '../../src/manager/certDir.js';
import type { TlsPair } from '../../src/manager/certificates/tlsPair.js';
import type { WebhookServerMetrics } from '../../src/manager/webhookMetrics.js';
import { kubeSource } from '../../src/sources/kubeSource.js';

// Type-level only: these functions are compiled by tsc, never called.
declare const kc: KubeConfig;

/** The part of prom-client's Registry (v15) the manager reads, as it declares it: a getter and an async metrics(). */
declare class PromRegistry {
  get contentType(): 'text/plain; version=0.0.4; charset=utf-8' | 'application/openmetrics-text; version=1.0.0; charset=utf-8';
  metrics(): Promise<string>;
  clear(): void;
  getSingleMetric(name: string): unknown;
  registerMetric(metric: unknown): void;
  setDefaultLabels(labels: object): void;
}

/** The shape `prometheusMetrics()` of rxkube/metrics is built to: the Registry's, plus what it is told to export. */
interface PrometheusMetrics {
  readonly contentType: string;
  metrics(): Promise<string>;
  addController(c: Controller<any>): void;
  addInformer(i: Informer<any>): void;
  addLeaderElection(name: string, leading$: Observable<boolean>): void;
}

describe('manager types', () => {
  it('takes typed controllers and informers, a prom-client Registry or the rxkube/metrics object, and emits ManagerEvents', () => {
    const typed = (registry: PromRegistry, prometheus: PrometheusMetrics): void => {
      const deployments: Informer<V1Deployment> = informer(kubeSource(kc, 'apps/v1/deployments'));
      const pods: Informer<V1Pod> = informer(kubeSource(kc, 'v1/pods'));
      const configMaps: Informer<V1ConfigMap> = informer(kubeSource(kc, 'v1/configmaps'));
      const c: Controller<V1Deployment> = controller({ for: deployments, owns: [{ source: configMaps }], reconcile: () => undefined });
      const m = manager({ controllers: [c], informers: [pods], metrics: registry });
      expectTypeOf(m).toEqualTypeOf<Observable<ManagerEvent>>();
      manager({ controllers: [c], metrics: prometheus, leaderElection: { lock: leaseLock(kc, { namespace: 'ops', name: 'x' }) } });
      expectTypeOf(runManager({ controllers: [c] })).toEqualTypeOf<Promise<number>>();
      m.subscribe((e) => {
        if (e.type === 'reconcile') expectTypeOf(e.outcome.key).toEqualTypeOf<string>();
        if (e.type === 'serving') expectTypeOf(e.url).toEqualTypeOf<string>();
        if (e.type === 'serving') expectTypeOf(e.address).toEqualTypeOf<string>();
      });
      manager({ controllers: [c], maxInitialSyncMs: 900_000, serverLimits: { maxConnections: 16, answerTimeoutMs: 5_000 } });
    };
    void typed;
  });

  it('rejects what cannot run: an informer among controllers, metrics without metrics(), a lock that is a name', () => {
    const typed = (): void => {
      const pods = informer(kubeSource(kc, 'v1/pods'));
      // @ts-expect-error an informer is not a controller
      manager({ controllers: [pods] });
      const noText = { contentType: 'text/plain' };
      // @ts-expect-error metrics() is required
      const bad: ManagerMetrics = noText;
      // @ts-expect-error the lock is a ResourceLock, not a Lease name
      manager({ controllers: [], informers: [pods], leaderElection: { lock: 'my-lease' } });
      // @ts-expect-error a limit is a number of connections or milliseconds, not a string
      manager({ controllers: [], informers: [pods], serverLimits: { headersTimeoutMs: '10s' } });
      void bad;
    };
    void typed;
  });

  it('serves webhooks, alone or beside controllers, and names the server in its events', () => {
    const typed = (webhook: Webhook): void => {
      manager({ controllers: [], webhooks: [webhook], webhookBindAddress: ':9443', webhookCertDir: '/certs', serverLimits: { maxBodyBytes: 1 << 20 } });
      manager({ controllers: [], webhooks: [webhook], serverLimits: { maxBodyBytes: 1 << 20, maxBufferedBodyBytes: 1 << 25 } });
      // @ts-expect-error the budget is a byte count, not a size written as text
      manager({ controllers: [], webhooks: [webhook], serverLimits: { maxBufferedBodyBytes: '32Mi' } });
      manager({ controllers: [], webhooks: [webhook] }).subscribe((e) => {
        if (e.type === 'serving') expectTypeOf(e.server).toEqualTypeOf<'metrics' | 'probes' | 'webhooks'>();
      });
      const metrics: ManagerMetrics = { contentType: 'text/plain', metrics: async () => '', addWebhooks: (server) => expectTypeOf(server.metrics()).toEqualTypeOf<WebhookServerMetrics>() };
      manager({ controllers: [], webhooks: [webhook], metrics, metricsSecure: { kubeConfig: kc, certDir: '/metrics-certs', cacheTtlMs: 30_000 } });
      expectTypeOf(certDirPairs('/certs')).toEqualTypeOf<Observable<TlsPair>>();
    };
    void typed;
  });

  it('rejects a webhook that is only a path, a bind address that is a port number, secure metrics without a KubeConfig', () => {
    const typed = (webhook: Webhook): void => {
      // @ts-expect-error a webhook answers reviews: a path alone is not one
      manager({ controllers: [], webhooks: [{ type: 'validating', path: '/validate' }] });
      // @ts-expect-error the type is one of validating, mutating, conversion
      const odd: Webhook = { ...webhook, type: 'authorizing' };
      // @ts-expect-error an address is a string such as ':9443'
      manager({ controllers: [], webhooks: [webhook], webhookBindAddress: 9443 });
      // @ts-expect-error secure metrics post reviews with a KubeConfig
      manager({ controllers: [], webhooks: [webhook], metricsSecure: { certDir: '/certs' } });
      void odd;
    };
    void typed;
  });
});
