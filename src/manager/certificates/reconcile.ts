import type { V1CustomResourceDefinition, V1MutatingWebhookConfiguration, V1Secret, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { objectClient } from '../../client/objectClient.js';
import type { ObjectClient } from '../../client/types.js';
import { reportError } from '../../errors/reportError.js';
import { printable } from '../../errors/printable.js';
import type { KubeObject } from '../../store/types.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../errors/api/guards.js';
import { CertificateProvisionError } from './CertificateProvisionError.js';
import type { ResolvedWebhookCertificates } from './options.js';
import { plan } from './plan.js';
import { base64, dataOf, materialOf, type SecretContent } from './secretData.js';

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

/** How a pass ended: look again at once (a write raced another writer, or changed the Secret), or at `wakeAt`; `wroteBundles` when it wrote a CA bundle. */
export type PassOutcome = { readonly again: true } | { readonly again: false; readonly wakeAt: number; readonly wroteBundles: boolean };

/** A write that lost a race to another writer: the pass is run again on fresh reads, and nothing is reported. */
class Raced extends Error {}

async function step<R>(s: CertificateProvisionError['step'], what: string, work: () => Promise<R>): Promise<R> {
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

interface CaBundleField {
  caBundle?: string;
}

/** One object whose client configs carry the bundle, as read, with those configs (in the copy). */
interface Target {
  readonly what: string;
  readonly copy: KubeObject;
  readonly fields: readonly CaBundleField[];
  readonly write: (o: KubeObject) => Promise<unknown>;
}

/** Reads one object that carries the bundle; undefined when it does not exist, or `fieldsOf` finds nowhere to write. */
async function readTarget<T extends KubeObject>(client: ObjectClient<T>, what: string, name: string, signal: AbortSignal, fieldsOf: (copy: T, what: string) => CaBundleField[] | undefined): Promise<Target | undefined> {
  const found = await step('read', `reading ${what}`, () => getOrUndefined(client, name, signal));
  if (found === undefined) return undefined;
  const copy = structuredClone(found);
  const fields = fieldsOf(copy, what);
  return fields === undefined ? undefined : { what, copy, fields, write: (o) => client.replace(o as T, { signal }) };
}

const configurationFields = (copy: V1ValidatingWebhookConfiguration | V1MutatingWebhookConfiguration): CaBundleField[] =>
  (copy.webhooks ?? []).map((h) => h.clientConfig).filter((cc): cc is NonNullable<typeof cc> => typeof cc === 'object' && cc !== null);

function crdFields(copy: V1CustomResourceDefinition, what: string): CaBundleField[] | undefined {
  const clientConfig = copy.spec.conversion?.webhook?.clientConfig;
  if (typeof clientConfig === 'object' && clientConfig !== null) return [clientConfig];
  reportError(
    new CertificateProvisionError('crd-without-webhook', `webhookCertificates: ${what} has no spec.conversion.webhook.clientConfig to write the CA bundle into: install it from crd({ conversionWebhook }), or leave it out of customResources`),
  );
  return undefined;
}

/** Every object that carries the bundle and exists (WH-105). */
async function readTargets(c: ResolvedWebhookCertificates, clients: Clients, signal: AbortSignal): Promise<Target[]> {
  const found = [
    await readTarget(clients.validating, `ValidatingWebhookConfiguration ${c.name}`, c.name, signal, configurationFields),
    await readTarget(clients.mutating, `MutatingWebhookConfiguration ${c.name}`, c.name, signal, configurationFields),
  ];
  for (const name of c.crdNames) found.push(await readTarget(clients.crds, `CustomResourceDefinition ${name}`, name, signal, crdFields));
  return found.filter((t): t is Target => t !== undefined);
}

/** Makes every client config carry exactly `bundle` (the Secret's `ca.crt`, WH-105); only a field that differs is written. Says whether it wrote. */
async function writeBundles(targets: readonly Target[], bundle: string): Promise<boolean> {
  const wanted = base64(bundle);
  let wrote = false;
  for (const t of targets) {
    const stale = t.fields.filter((f) => f.caBundle !== wanted);
    if (stale.length === 0) continue;
    for (const f of stale) f.caBundle = wanted;
    await step('write-bundle', `writing the CA bundle into ${t.what}`, () => t.write(t.copy));
    wrote = true;
  }
  return wrote;
}

async function writeSecret(c: ResolvedWebhookCertificates, clients: Clients, existing: V1Secret | undefined, content: SecretContent, signal: AbortSignal): Promise<void> {
  const { namespace, name } = c.secret;
  const data = dataOf(existing, content);
  await step('write-secret', `writing Secret ${namespace}/${name}`, () =>
    existing === undefined
      ? clients.secrets.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'kubernetes.io/tls', data }, { signal })
      : // The resourceVersion read makes it conditional: of two writers, one wins (WH-103, WH-116).
        clients.secrets.replace({ ...existing, data }, { signal }),
  );
}

/**
 * One pass of the leader (WH-101…WH-106, WH-113…WH-116): reads the Secret
 * and the objects that carry the bundle; writes the Secret when it must
 * change (and then looks again, so that the bundles are written from what
 * the Secret holds once that write won), else makes every bundle carry the
 * Secret's `ca.crt`, and says when to look again.
 *
 * @param settleFrom the last moment this leader wrote a bundle, or started leading.
 */
export async function reconcilePass(c: ResolvedWebhookCertificates, clients: Clients, signal: AbortSignal, settleFrom: number): Promise<PassOutcome> {
  const now = c.scheduler.now();
  const where = `Secret ${c.secret.namespace}/${c.secret.name}`;
  try {
    // The bundles' objects before the Secret (WH-116): if another writer replaces the Secret after this read, its
    // bundle writes change these objects, so a bundle written here from the older Secret gets 409 instead of undoing them.
    const targets = await readTargets(c, clients, signal);
    const secret = await step('read', `reading ${where}`, () => getOrUndefined(clients.secrets, c.secret.name, signal));
    const m = materialOf(secret);
    const bundlesTrusted = m.ca !== undefined && targets.every((t) => t.fields.every((f) => f.caBundle === base64(m.ca ?? '')));
    const p = await step('generate', 'generating a CA or serving certificate', () => plan(m, { c, where, now, bundlesTrusted, settleFrom }));
    if (p.next !== undefined) {
      // The Secret decides (WH-116): a write that loses is read again; the bundles follow what won, in the next pass.
      await writeSecret(c, clients, secret, p.next, signal);
      return { again: true };
    }
    if (m.ca === undefined) return { again: false, wakeAt: p.wakeAt, wroteBundles: false };
    const wroteBundles = await writeBundles(targets, m.ca);
    return { again: false, wakeAt: p.wakeAt, wroteBundles };
  } catch (err) {
    if (err instanceof Raced) return { again: true };
    throw err;
  }
}
