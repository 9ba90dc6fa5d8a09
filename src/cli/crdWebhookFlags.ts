/**
 * `--webhook-service`, `--webhook-url` and `--ca-bundle-file` of `rxkube crd generate | install`: where the
 * CRD of a definition with converters sends ConversionReviews (semantics WH-44).
 */
import { readFileSync, statSync } from 'node:fs';
import type { CrdOptions } from '../crd/crdConversion.js';
import { printable } from '../errors/printable.js';
import { UsageError } from './usage.js';

/** The flags as commander gives them. */
export interface WebhookFlags {
  readonly webhookService?: string;
  readonly webhookUrl?: string;
  readonly caBundleFile?: string;
}

/** A CA bundle file larger than this is not one. */
const MAX_CA_BUNDLE_BYTES = 1024 * 1024;
const SERVICE = /^([^/:]+)\/([^/:]+)(?::([0-9]{1,5}))?$/;

/** The help lines of the three flags, for the commands' help text. */
export const WEBHOOK_FLAGS_HELP = `
A definition with converters (customResource({ versions, conversion })) needs
its conversion webhook: --webhook-service <namespace>/<name>[:port] (path
/convert, port 443 unless given) or --webhook-url https://…, and optionally
--ca-bundle-file with the PEM the API server trusts for it.`;

/**
 * The options the flags give to `crd()` of definitions with converters, or undefined when none is given.
 *
 * @param flags the parsed flags.
 * @returns the crd() options, or undefined.
 * @throws UsageError for both --webhook-service and --webhook-url, a malformed service, or a CA bundle without either or unreadable.
 */
export function crdWebhookOptions(flags: WebhookFlags): CrdOptions | undefined {
  const { webhookService, webhookUrl, caBundleFile } = flags;
  if (webhookService !== undefined && webhookUrl !== undefined) throw new UsageError('--webhook-service and --webhook-url: give one of them');
  if (webhookService === undefined && webhookUrl === undefined) {
    if (caBundleFile !== undefined) throw new UsageError('--ca-bundle-file needs --webhook-service or --webhook-url: it is the CA of that webhook');
    return undefined;
  }
  const caBundle = caBundleFile === undefined ? undefined : readCaBundle(caBundleFile);
  const bundle = caBundle === undefined ? {} : { caBundle };
  if (webhookUrl !== undefined) return { conversionWebhook: { url: webhookUrl }, ...bundle };
  const match = SERVICE.exec(webhookService as string);
  if (match === null) throw new UsageError(`--webhook-service must be <namespace>/<name>[:port] (web-system/web-webhook:443), got ${printable(JSON.stringify(webhookService))}`);
  const [, namespace = '', name = '', port] = match;
  return { conversionWebhook: { service: { namespace, name, ...(port === undefined ? {} : { port: Number(port) }) } }, ...bundle };
}

/**
 * Reads `--ca-bundle-file`, bounded.
 *
 * @param path the file.
 * @returns its text.
 * @throws UsageError for a file that cannot be read or is too large to be a CA bundle.
 */
export function readCaBundle(path: string): string {
  const shown = printable(path);
  try {
    if (statSync(path).size > MAX_CA_BUNDLE_BYTES) throw new UsageError(`--ca-bundle-file ${shown}: larger than ${MAX_CA_BUNDLE_BYTES} bytes, not a CA bundle`);
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--ca-bundle-file ${shown}: ${printable(err instanceof Error ? err.message : String(err))}`);
  }
}
