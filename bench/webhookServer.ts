// One webhook server for `npm run bench -- webhooks`, in a process of its own so the load generator's CPU never
// shows up in its figures: rxkube's (runManager serving admission.validating and admission.mutating, with
// prometheusMetrics as an operator runs it) or the bare `node:https` baseline, both on 127.0.0.1 with the
// certificate of the cert dir they are given.

import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { admission, runManager } from 'rxkube';
import { prometheusMetrics } from 'rxkube/metrics';
import { bareWebhookServer, MUTATE_PATH, refusal, VALIDATE_PATH, withDefaults } from './lib/admissionWork.js';
import { serve } from './lib/ipc.js';

/** Which server to start, and where its `tls.crt` and `tls.key` are. */
export interface WebhookServerArgs {
  readonly kind: 'rxkube' | 'bare';
  readonly certDir: string;
}

/** The port it listens on. */
export interface WebhookServerReply {
  readonly port: number;
}

let stop: (() => Promise<void>) | undefined;

/** rxkube's server: the runner with the two webhooks and nothing else. */
async function startRxkube(certDir: string): Promise<WebhookServerReply> {
  const validate = admission.validating('v1/configmaps', ({ object }) => {
    const why = object === undefined ? undefined : refusal(object);
    return why === undefined ? admission.allow() : admission.deny(why);
  }, { path: VALIDATE_PATH });
  const mutate = admission.mutating('v1/configmaps', ({ object }) => withDefaults(object), { path: MUTATE_PATH });
  const abort = new AbortController();
  let served: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => (served = resolve));
  const exit = runManager({
    controllers: [],
    webhooks: [validate, mutate],
    webhookBindAddress: '127.0.0.1:0',
    webhookCertDir: certDir,
    metrics: prometheusMetrics({ defaultMetrics: false }),
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
    signal: abort.signal,
    signals: [],
    onEvent: (e) => {
      if (e.type === 'serving' && e.server === 'webhooks') served(e.port);
    },
  });
  const bound = await Promise.race([port, exit.then((code) => Promise.reject(new Error(`runManager exited with ${code} before serving webhooks`)))]);
  stop = async () => {
    abort.abort();
    await exit;
  };
  return { port: bound };
}

/** The baseline. */
async function startBare(certDir: string): Promise<WebhookServerReply> {
  const server = bareWebhookServer(certDir);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  stop = async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  };
  return { port: (server.address() as AddressInfo).port };
}

serve({
  start: (args: WebhookServerArgs) => (args.kind === 'rxkube' ? startRxkube(args.certDir) : startBare(args.certDir)),
  stop: async () => {
    await stop?.();
    stop = undefined;
    return {};
  },
});
