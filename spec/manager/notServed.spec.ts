/** /readyz?verbose says which resource the server does not serve, and turns ready once the CRD arrives (CR-134). */
import { afterEach, expect, it } from 'vitest';
import { controller, informer, kubeSource, type KubeObject } from '../../src/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { probeUntil } from '../helpers/probe.js';
import { start, type Running } from './harness.js';

let server: ApiServer | undefined;
let running: Running | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await server?.close();
  server = undefined;
});

it('/readyz?verbose names the resource the server does not serve, with the served name it may mean, then passes once it is served', async () => {
  const s = await startApiServer({ port: 0 });
  server = s;
  s.registerResource({ group: 'example.com', version: 'v1', plural: 'webhooks', kind: 'Webhook' });
  const errors: Error[] = [];
  const websites = informer(kubeSource(s.kubeConfig(), 'example.com/v1/websites'), { reflector: { backoff: { initialMs: 20, maxMs: 100 } }, onError: (e) => errors.push(e) });
  const ctl = controller<KubeObject>({ for: websites, reconcile: () => undefined, onError: (e) => errors.push(e) });
  running = start({ controllers: [ctl], healthProbeBindAddress: '127.0.0.1:0' });
  const base = await running.probes();

  // Between retries the informer is listing again, and says so: wait for a probe that lands in the backoff.
  const { body } = await probeUntil(`${base}/readyz?verbose`, 503, 'the list to be explained', { body: /retrying in .* after ResourceNotServedError/ });
  expect(body).toMatch(
    /^\[-\]informer example\.com\/v1\/websites failed: not synced: retrying in \d+\.\d s after ResourceNotServedError: list example\.com\/v1\/websites: 404 NotFound: example\.com\/v1 serves no resource "websites": is the CRD installed\?$/m,
  );
  s.registerResource({ group: 'example.com', version: 'v1', plural: 'websites', kind: 'Website' });
  const ready = await probeUntil(`${base}/readyz?verbose`, 200, 'the cache to sync once the resource is served');
  expect(ready.body).toMatch(/^\[\+\]informer example\.com\/v1\/websites ok$/m);
});
