import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controller } from '../../src/controller/controller.js';
import { informer } from '../../src/informer/informer.js';
import { leaseLock } from '../../src/leaderelection/leaseLock.js';
import { parseBindAddress } from '../../src/manager/bindAddress.js';
import { manager } from '../../src/manager/manager.js';
import type { ManagerOptions } from '../../src/manager/options.js';
import { runManager } from '../../src/manager/runManager.js';
import { kubeSource } from '../../src/sources/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer({ port: 0 });
});
afterAll(async () => {
  await server.close();
});

describe('parseBindAddress', () => {
  it.each([
    [':8080', { host: undefined, port: 8080 }],
    ['127.0.0.1:8081', { host: '127.0.0.1', port: 8081 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
    ['localhost:9443', { host: 'localhost', port: 9443 }],
    ['[::1]:8081', { host: '::1', port: 8081 }],
    ['metrics.local:65535', { host: 'metrics.local', port: 65535 }],
  ])('reads %s', (text, expected) => {
    expect(parseBindAddress('x', text)).toEqual(expected);
  });

  it('reads "0" as no server', () => {
    expect(parseBindAddress('x', '0')).toBeUndefined();
  });

  it.each([
    ['localhost:99999', /option "healthProbeBindAddress" has port 99999, outside 0-65535, got "localhost:99999"/],
    ['foo', /option "healthProbeBindAddress" must be host:port .* or "0" to disable, got "foo"/],
    ['8080', /must be host:port/],
    ['', /must be host:port/],
    [':http', /must end in a port number/],
    [':-1', /must end in a port number/],
    ['::1:8080', /IPv6 host without brackets; write "\[::1\]:8080"/],
    ['[nope]:80', /"\[nope\]", which is not an IPv6 address/],
    ['bad_host:80', /"bad_host", which is neither an IP address nor a host name/],
    [8080, /must be a string/],
  ])('names %j at once', (text, message) => {
    expect(() => parseBindAddress('healthProbeBindAddress', text)).toThrow(TypeError);
    expect(() => parseBindAddress('healthProbeBindAddress', text)).toThrow(message);
  });
});

describe('manager options', () => {
  const ctl = () => controller({ for: informer(kubeSource(server.kubeConfig(), 'v1/pods')), reconcile: () => undefined });
  const metrics = { contentType: 'text/plain', metrics: async () => '' };

  it.each<[string, (c: ReturnType<typeof ctl>) => unknown, RegExp]>([
    ['a bad probe address', (c) => ({ controllers: [c], healthProbeBindAddress: 'localhost:99999' }), /"healthProbeBindAddress" has port 99999/],
    ['a bad metrics address', (c) => ({ controllers: [c], metrics, metricsBindAddress: 'foo' }), /"metricsBindAddress" must be host:port.*got "foo"/],
    ['a metrics address without metrics', (c) => ({ controllers: [c], metricsBindAddress: ':9090' }), /"metricsBindAddress" is ":9090" but there is no "metrics" option/],
    ['one port for both servers', (c) => ({ controllers: [c], metrics, metricsBindAddress: ':8081', healthProbeBindAddress: '127.0.0.1:8081' }), /both use port 8081/],
    ['a misspelt option', (c) => ({ controllers: [c], healthProbeBindAdress: ':8081' }), /unknown option "healthProbeBindAdress"/],
    ['no controllers option', () => ({ informers: [] }), /option "controllers" is required/],
    ['nothing to run', () => ({ controllers: [] }), /nothing to run/],
    ['a controller that is not one', () => ({ controllers: [{}] }), /controllers\[0\] must be a controller/],
    ['an informer that is not one', (c) => ({ controllers: [c], informers: ['v1/pods'] }), /informers\[0\] must be an informer \(from informer\(\)\), got "v1\/pods"/],
    ['metrics without metrics()', (c) => ({ controllers: [c], metrics: { contentType: 'text/plain' } }), /option "metrics" must have contentType .* and metrics\(\)/],
    ['a bad addController', (c) => ({ controllers: [c], metrics: { ...metrics, addController: 1 } }), /"metrics.addController" must be a function, got 1/],
    ['a zero maxSilenceMs', (c) => ({ controllers: [c], maxSilenceMs: 0 }), /option "maxSilenceMs" must be a finite number >= 1, got 0/],
    ['a zero maxInitialSyncMs', (c) => ({ controllers: [c], maxInitialSyncMs: 0 }), /option "maxInitialSyncMs" must be a finite number >= 1, got 0/],
    ['a misspelt server limit', (c) => ({ controllers: [c], serverLimits: { maxConnection: 8 } }), /serverLimits: unknown option "maxConnection"/],
    ['a zero connection cap', (c) => ({ controllers: [c], serverLimits: { maxConnections: 0 } }), /option "serverLimits.maxConnections" must be an integer >= 1, got 0/],
    ['a timeout Node cannot take', (c) => ({ controllers: [c], serverLimits: { idleTimeoutMs: 2 ** 31 } }), /option "serverLimits.idleTimeoutMs" must be at most 2147483647, got 2147483648/],
    ['headers allowed longer than the request', (c) => ({ controllers: [c], serverLimits: { headersTimeoutMs: 40_000 } }), /"serverLimits.headersTimeoutMs" \(40000\) must not exceed "serverLimits.requestTimeoutMs" \(30000\)/],
    ['a zero body limit', (c) => ({ controllers: [c], serverLimits: { maxBodyBytes: 0 } }), /option "serverLimits.maxBodyBytes" must be an integer >= 1, got 0/],
    ['secure metrics without metrics', (c) => ({ controllers: [c], metricsSecure: { kubeConfig: server.kubeConfig() } }), /"metricsSecure" is given but no metrics are served/],
    ['secure metrics without a KubeConfig', (c) => ({ controllers: [c], metrics, metricsSecure: { certDir: '/certs' } }), /"metricsSecure.kubeConfig" must be a KubeConfig with a current cluster/],
    ['a misspelt secure metrics option', (c) => ({ controllers: [c], metrics, metricsSecure: { kubeConfig: server.kubeConfig(), cacheTTL: 1 } }), /metricsSecure: unknown option "cacheTTL"/],
    ['a negative cache time', (c) => ({ controllers: [c], metrics, metricsSecure: { kubeConfig: server.kubeConfig(), cacheTtlMs: -1 } }), /"metricsSecure.cacheTtlMs" must be an integer >= 0, got -1/],
    ['an empty certificate directory name', (c) => ({ controllers: [c], webhooks: [{ type: 'conversion', path: '/convert', review: async () => ({ status: 200, body: {} }) }], webhookCertDir: '' }), /"webhookCertDir" must be a directory path/],
    ['a webhook timeout Node cannot wait for', (c) => ({ controllers: [c], webhooks: [{ type: 'validating', path: '/v', review: async () => ({ status: 200, body: {} }), timeoutSeconds: 3_000_000 }] }), /option "webhooks\[0\]\.timeoutSeconds" must be an integer from 1 to 30 .*, got 3000000/],
    ['a zero webhook timeout', (c) => ({ controllers: [c], webhooks: [{ type: 'validating', path: '/v', review: async () => ({ status: 200, body: {} }), timeoutSeconds: 0 }] }), /"webhooks\[0\]\.timeoutSeconds" must be an integer from 1 to 30 .*, got 0/],
    ['a signal that is not one', (c) => ({ controllers: [c], signal: 'SIGTERM' }), /option "signal" must be an AbortSignal, got "SIGTERM"/],
    ['a lock that is not one', (c) => ({ controllers: [c], leaderElection: { lock: 'my-lease' } }), /"leaderElection.lock" must be a lock such as leaseLock/],
    [
      'leader election timings that do not fit',
      (c) => ({ controllers: [c], leaderElection: { lock: leaseLock(server.kubeConfig(), { namespace: 'default', name: 'l' }), leaseDuration: 5_000, renewDeadline: 6_000 } }),
      /option "leaderElection.leaseDuration" must be greater than renewDeadline \(6000 ms\), got 5000 ms/,
    ],
    ['a misspelt leader election option', (c) => ({ controllers: [c], leaderElection: { lock: leaseLock(server.kubeConfig(), { namespace: 'default', name: 'l' }), leaseDurationMs: 1 } }), /leaderElection: unknown option "leaseDurationMs"/],
  ])('throws a TypeError at construction for %s', (_what, opts, message) => {
    const c = ctl();
    expect(() => manager(opts(c) as ManagerOptions)).toThrow(TypeError);
    expect(() => manager(opts(c) as ManagerOptions)).toThrow(message);
  });

  it('runManager checks its own options and the manager\'s before anything starts', () => {
    const c = ctl();
    expect(() => runManager({ controllers: [c], signals: ['TERM' as NodeJS.Signals] })).toThrow(/option "signals" must be an array of signal names/);
    expect(() => runManager({ controllers: [c], healthProbeBindAddress: 'localhost:99999', signals: [] })).toThrow(/"healthProbeBindAddress" has port 99999/);
    // Nothing was subscribed: the informer is still idle.
    expect(c.sources[0] && (c.sources[0] as ReturnType<typeof informer>).status().state).toBe('idle');
  });
});
