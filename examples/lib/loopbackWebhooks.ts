/**
 * Webhooks on the simulator: the simulator calls a webhook at a `url` on 127.0.0.1, trusting the CA bundle its
 * configuration names, as kube-apiserver calls one outside the cluster. What a cluster gets from a Service and
 * provisioned certificates, a run on the simulator gets from here: a CA and a serving certificate for 127.0.0.1
 * in a cert dir, a port, and the webhook configurations created through the API.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ApiServerOptions } from 'rxkube/testing';
import { objectClient, webhookManifests, type Webhook } from 'rxkube';
import { generateCa, issueServing } from 'rxkube/core';

/** A serving certificate for 127.0.0.1 in a directory, as `--webhook-cert-dir` reads it. */
export interface LoopbackCerts {
  /** Holds `tls.crt` and `tls.key`. */
  readonly certDir: string;
  /** The CA that signed it (PEM): the configurations' and the CRD's `caBundle`. */
  readonly caBundle: string;
  /** Removes the directory. */
  remove(): void;
}

/** A CA valid for a day and a certificate it signs for 127.0.0.1 and localhost, in a new temp dir. */
export async function loopbackCerts(): Promise<LoopbackCerts> {
  const day = 86_400_000;
  const ca = await generateCa({ commonName: 'website-operator-example-ca', validityMs: day });
  const pair = await issueServing(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityMs: day });
  const certDir = mkdtempSync(join(tmpdir(), 'website-operator-certs-'));
  writeFileSync(join(certDir, 'tls.key'), pair.key, { mode: 0o600 });
  writeFileSync(join(certDir, 'tls.crt'), pair.cert);
  return { certDir, caBundle: ca.cert, remove: () => rmSync(certDir, { recursive: true, force: true }) };
}

/**
 * A port on 127.0.0.1 that was free a moment ago: the CRD's conversion `url` must name the port before the
 * simulator starts with that CRD, and the runner binds it right after.
 */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Registers `webhooks` served at `https://127.0.0.1:<port>` with the API server: the Validating- and
 * MutatingWebhookConfiguration `webhookManifests` makes for them, created through the API.
 *
 * @param kc the API server.
 * @param opts the configurations' name, the webhooks, their port, and the CA that signed their certificate.
 */
export async function registerLoopbackWebhooks(kc: KubeConfig, opts: { name: string; webhooks: readonly Webhook[]; port: number; caBundle: string }): Promise<void> {
  const manifests = webhookManifests({ name: opts.name, webhooks: opts.webhooks, clientConfig: { url: `https://127.0.0.1:${opts.port}` }, caBundle: opts.caBundle });
  for (const m of manifests as { kind: string }[]) {
    const resource = m.kind === 'ValidatingWebhookConfiguration' ? 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations' : 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
    await objectClient(kc, resource, { fieldManager: opts.name }).apply(m as never, { force: true });
  }
}

/** The Prometheus identity the simulator knows: it may `get /metrics`, so it scrapes with `--metrics-secure`. */
export const SIMULATED_SCRAPER = { token: 'prometheus-token', username: 'system:serviceaccount:monitoring:prometheus' } as const;
/** Another identity the simulator knows, which may not. */
export const SIMULATED_STRANGER = { token: 'stranger-token', username: 'system:serviceaccount:default:stranger' } as const;

/** The simulator's users and its answer to SubjectAccessReviews: only the scraper may `get /metrics`. */
export const simulatedScrapers: Pick<ApiServerOptions, 'users' | 'authorize'> = {
  users: [SIMULATED_SCRAPER, SIMULATED_STRANGER],
  authorize: ({ user, nonResourceAttributes }) => user === SIMULATED_SCRAPER.username && nonResourceAttributes?.path === '/metrics' && nonResourceAttributes.verb === 'get',
};
