import { afterEach } from 'vitest';
import { startApiServer, type ApiServer } from '../../../src/testing/index.js';
import { startWebhookServer, type Answer, type WebhookServer } from './webhookServer.js';

// What the simulator's webhook specs start (a simulator, webhook servers), each closed after its test, and how they
// register webhooks with it.

type AnyObject = Record<string, any>;

export const VWC = 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
export const MWC = 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

/** Starts simulators and webhook servers for the spec file that calls it, and closes them after each test (in reverse). */
export function webhookFixtures(): {
  simulator(opts?: Parameters<typeof startApiServer>[0]): Promise<ApiServer>;
  webhooks(answer: (path: string, review: AnyObject) => Answer | Promise<Answer>): Promise<WebhookServer>;
} {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });
  return {
    async simulator(opts = {}) {
      const s = await startApiServer(opts);
      closers.push(() => s.close());
      return s;
    },
    async webhooks(answer) {
      const w = await startWebhookServer(answer);
      closers.push(() => w.close());
      return w;
    },
  };
}

/** Registers `entries` in a Validating- or MutatingWebhookConfiguration named `name`. */
export async function register(server: ApiServer, resource: typeof VWC | typeof MWC, name: string, entries: AnyObject[]): Promise<void> {
  const kind = resource === VWC ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration';
  await server.create(resource, { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks: entries });
}
