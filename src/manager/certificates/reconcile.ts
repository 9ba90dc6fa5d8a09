import type { V1CustomResourceDefinition, V1MutatingWebhookConfiguration, V1Secret, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { objectClient } from '../../client/objectClient.js';
import type { ObjectClient } from '../../client/types.js';
import { reportError } from '../../errors/reportError.js';
import { printable } from '../../errors/printable.js';
import type { KubeObject } from '../../store/types.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../sources/errors/guards.js';
import { CertificateProvisionError, type CertificateProvisionStep } from './CertificateProvisionError.js';
import { generateCa, issueServing } from './generate.js';
import type { ResolvedWebhookCertificates } from './options.js';
import { plan } from './plan.js';
import { dataOf, materialOf } from './secretData.js';

/** The field manager of every write provisioning makes, so `managedFields` tells them apart. */
export const FIELD_MANAGER = 'rxkube-webhook-certificates';

/** The clients one provisioner writes with (internal). */
export interface Clients {
  readonly secrets: ObjectClient<V1Secret>;
  readonly validating: ObjectClient<V1ValidatingWebhookConfiguration>;
  readonly mutating: ObjectClient<V1MutatingWebhookConfiguration>;
  readonly crds: ObjectClient<V1CustomResourceDefinition>;
}

export function clientsOf(c: ResolvedWebhookCertificates): Clients {
  const opts = { fieldManager: FIELD_MANAGER };
  return {
    secrets: objectClient(c.kubeConfig, 'v1/secrets', { ...opts, namespace: c.secret.namespace }),
    validating: objectClient(c.kubeConfig, 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations', opts),
    mutating: objectClient(c.kubeConfig, 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', opts),
    crds: objectClient(c.kubeConfig, 'apiextensions.k8s.io/v1/customresourcedefinitions', opts),
  };
}

/** How a pass ended: look again at once (a write raced another writer, or changed the Secret), or at `wakeAt`. */
export type PassOutcome = { readonly again: true } | { readonly again: false; readonly wakeAt: number };

/** A write that lost a race to another writer: the pass is run again on fresh reads, and nothing is reported. */
class Raced extends Error {}

async function step<R>(s: CertificateProvisionStep, what: string, work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } catch (err) {
    if (isConflict(err) || isAlreadyExists(err)) throw new Raced();
    if (err instanceof CertificateProvisionError) throw err;
    const said = err instanceof Error ? err.message : String(err);
    throw new CertificateProvisionError(s, `webhookCertificates: ${what} failed: ${printable(said.slice(0, 500))}`, err);
  }
}

async function getOrUndefined<T extends KubeObject>(client: ObjectClient<T>, name: string, signal: AbortSignal): Promise<T | undefined> {
  try {
    return await client.get(name, { signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The bundle a client config should carry, base64: exactly the CAs given (WH-105); undefined when it already does. */
function bundleFor(current: unknown, cas: readonly string[]): string | undefined {
  const wanted = Buffer.from(cas.join(''), 'utf8').toString('base64');
  return wanted === current ? undefined : wanted;
}

type Configuration = V1ValidatingWebhookConfiguration | V1MutatingWebhookConfiguration;

async function writeConfiguration<T extends Configuration>(client: ObjectClient<T>, kind: string, c: ResolvedWebhookCertificates, cas: readonly string[], signal: AbortSignal): Promise<void> {
  const what = `${kind} ${c.name}`;
  const found = await step('read', `reading ${what}`, () => getOrUndefined(client, c.name, signal));
  if (found === undefined) return;
  const copy = structuredClone(found);
  let changed = false;
  for (const hook of copy.webhooks ?? []) {
    if (typeof hook.clientConfig !== 'object' || hook.clientConfig === null) continue;
    const bundle = bundleFor(hook.clientConfig.caBundle, cas);
    if (bundle === undefined) continue;
    hook.clientConfig.caBundle = bundle;
    changed = true;
  }
  if (changed) await step('write-bundle', `writing the CA bundle into ${what}`, () => client.replace(copy, { signal }));
}

async function writeCrd(client: Clients['crds'], name: string, cas: readonly string[], signal: AbortSignal): Promise<void> {
  const what = `CustomResourceDefinition ${name}`;
  const found = await step('read', `reading ${what}`, () => getOrUndefined(client, name, signal));
  if (found === undefined) return;
  const copy = structuredClone(found);
  const clientConfig = copy.spec.conversion?.webhook?.clientConfig;
  if (typeof clientConfig !== 'object' || clientConfig === null) {
    reportError(
      new CertificateProvisionError('crd-without-webhook', `webhookCertificates: ${what} has no spec.conversion.webhook.clientConfig to write the CA bundle into: install it from crd({ conversionWebhook }), or leave it out of customResources`),
    );
    return;
  }
  const bundle = bundleFor(clientConfig.caBundle, cas);
  if (bundle === undefined) return;
  clientConfig.caBundle = bundle;
  await step('write-bundle', `writing the CA bundle into ${what}`, () => client.replace(copy, { signal }));
}

/** Makes every client config carry exactly the CAs (WH-105). */
async function writeBundles(c: ResolvedWebhookCertificates, clients: Clients, cas: readonly string[], signal: AbortSignal): Promise<void> {
  await writeConfiguration(clients.validating, 'ValidatingWebhookConfiguration', c, cas, signal);
  await writeConfiguration(clients.mutating, 'MutatingWebhookConfiguration', c, cas, signal);
  for (const name of c.crdNames) await writeCrd(clients.crds, name, cas, signal);
}

async function writeSecret(c: ResolvedWebhookCertificates, clients: Clients, existing: V1Secret | undefined, data: Record<string, string>, signal: AbortSignal): Promise<void> {
  const { namespace, name } = c.secret;
  await step('write-secret', `writing Secret ${namespace}/${name}`, () =>
    existing === undefined
      ? clients.secrets.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'kubernetes.io/tls', data }, { signal })
      : // The resourceVersion read makes it conditional: of two leaders, one wins (WH-103).
        clients.secrets.replace({ ...existing, data }, { signal }),
  );
}

/**
 * One pass of the leader (WH-101…WH-106): reads the Secret, issues a new
 * pair when it must, writes the CA bundle where it is missing, and says
 * when to look again.
 */
export async function reconcilePass(c: ResolvedWebhookCertificates, clients: Clients, signal: AbortSignal): Promise<PassOutcome> {
  const now = c.scheduler.now();
  const where = `Secret ${c.secret.namespace}/${c.secret.name}`;
  try {
    const secret = await step('read', `reading ${where}`, () => getOrUndefined(clients.secrets, c.secret.name, signal));
    const p = await plan(materialOf(secret), where, c.dnsNames, now, c.rotateBeforeMs, c.ipAddresses);
    if (p.action === 'issue') {
      const { ca, pair } = await step('generate', 'generating a CA and serving certificate', async () => {
        const ca = await generateCa({ commonName: `${c.name}-webhook-ca`.slice(0, 64), validityMs: c.validityMs, now });
        return { ca, pair: await issueServing(ca, { dnsNames: c.dnsNames, ipAddresses: c.ipAddresses, validityMs: c.validityMs, now }) };
      });
      const cas = [ca.cert, ...p.carry];
      // Trusted before served (WH-105): the bundles first, then the Secret every replica serves from.
      let bundleFailure: unknown;
      try {
        await writeBundles(c, clients, cas, signal);
      } catch (err) {
        // With nothing trusted being served (no carried CA), there is nothing to keep working: the pair is written anyway (WH-105).
        if (err instanceof Raced || p.carry.length > 0) throw err;
        bundleFailure = err;
      }
      await writeSecret(c, clients, secret, dataOf(secret, pair.cert, pair.key, cas), signal);
      if (bundleFailure !== undefined) throw bundleFailure;
      return { again: true };
    }
    if (p.pruned && secret !== undefined) {
      const m = materialOf(secret);
      await writeSecret(c, clients, secret, dataOf(secret, m.cert ?? '', m.key ?? '', p.cas), signal);
      return { again: true };
    }
    await writeBundles(c, clients, p.cas, signal);
    return { again: false, wakeAt: p.wakeAt };
  } catch (err) {
    if (err instanceof Raced) return { again: true };
    throw err;
  }
}
