/**
 * `rxkube manifests <module>`: the ValidatingWebhookConfiguration and
 * MutatingWebhookConfiguration that register the webhooks a module exports,
 * and the CRDs of the custom resources it exports, ready for `kubectl apply -f -`.
 */
import { isWebhook } from '../admission/isWebhook.js';
import { webhookManifests, type WebhookClientConfig } from '../admission/manifests.js';
import type { Webhook } from '../admission/types.js';
import { printable } from '../errors/printable.js';
import type { CustomResource } from '../crd/customResource.js';
import { importModule, isDefinition } from './crdExports.js';
import { orderCrd } from './crdManifest.js';
import { readCaBundle } from './crdWebhookFlags.js';
import { UsageError } from './usage.js';

/** The command's flags, as commander gives them. */
export interface ManifestsFlags {
  readonly service?: string;
  readonly url?: string;
  readonly name?: string;
  readonly caBundleFile?: string;
  readonly output: 'yaml' | 'json';
}

const SERVICE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?::(\d{1,5}))?$/;

/** `--service ns/name[:port]` or `--url https://…`, exactly one. */
export function clientConfigFlag(flags: Pick<ManifestsFlags, 'service' | 'url'>): WebhookClientConfig {
  if ((flags.service === undefined) === (flags.url === undefined)) throw new UsageError('give exactly one of --service <namespace>/<name>[:port] and --url <https://host[:port]>');
  if (flags.url !== undefined) return { url: flags.url };
  const m = SERVICE.exec(flags.service ?? '');
  if (m === null) throw new UsageError(`--service must be <namespace>/<name>[:port] in lower case, e.g. shop-system/shop-operator-webhooks:443; got ${printable(JSON.stringify(flags.service))}`);
  const [, namespace, , name, , port] = m as unknown as [string, string, string, string, string, string | undefined];
  return { service: { namespace, name, ...(port === undefined ? {} : { port: Number(port) }) } };
}

/**
 * Loads the module and builds what the command prints: the CRDs of its
 * custom-resource definitions (with the conversion webhook for those that
 * convert between versions), then the webhook configurations.
 *
 * @param module the module path.
 * @param flags the command's flags.
 * @returns the objects, in the order to apply them.
 * @throws {UsageError} for a module that loads nothing to register, or a bad flag.
 */
export async function manifestsOf(module: string, flags: ManifestsFlags): Promise<Record<string, unknown>[]> {
  const clientConfig = clientConfigFlag(flags);
  const caBundle = flags.caBundleFile === undefined ? undefined : readCaBundle(flags.caBundleFile);
  const name = flags.name ?? ('service' in clientConfig ? clientConfig.service.name : 'rxkube-webhooks');
  const shown = printable(module);
  const namespace = await importModule(module);
  const webhooks: Webhook[] = [];
  const definitions: CustomResource<any, any>[] = [];
  const seen = new Set<unknown>();
  for (const value of Object.values(namespace)) {
    if (seen.has(value)) continue;
    seen.add(value);
    if (isWebhook(value)) webhooks.push(value);
    else if (isDefinition(value)) definitions.push(value as CustomResource<any, any>);
  }
  if (webhooks.length === 0 && definitions.length === 0) {
    throw new UsageError(`${shown} exports no webhook (admission.validating, admission.mutating, admission.conversion) and no custom-resource definition; its exports: ${Object.keys(namespace).map((n) => printable(n)).join(', ') || 'none'}`);
  }
  let objects: readonly object[];
  try {
    objects = webhookManifests({ name, webhooks, clientConfig, customResources: definitions, ...(caBundle === undefined ? {} : { caBundle }) });
  } catch (err) {
    if (err instanceof TypeError) {
      const message = err.message
        .replace(/option "clientConfig[^"]*"/, '--service/--url')
        .replace('option "caBundle"', '--ca-bundle-file')
        .replace('option "name"', '--name')
        // A converting definition without its conversion webhook: the module must export one.
        .replace(/in option "webhooks" converts it; add (admission\.conversion\([^)]*\)) to webhooks/, 'among its exports converts it; export $1 beside it');
      throw new UsageError(`${shown}: ${message}`);
    }
    throw err;
  }
  return (objects as Record<string, unknown>[]).map((o) => (o['kind'] === 'CustomResourceDefinition' ? orderCrd(o) : o));
}
