import type { KubeObject } from '../store/types.js';
import { describeValue } from '../options/validate.js';
import { checkBoolean, checkName } from './checks.js';
import type { ClientContext } from './context.js';
import type { ApplyConfiguration, ApplyOptions } from './types.js';

/** The content type of server-side apply; a JSON body is valid YAML, so JSON is what is sent. */
export const APPLY_PATCH = 'application/apply-patch+yaml';

/**
 * Checks an apply configuration before sending it: kube-apiserver needs the
 * type metadata of the resource and the object's name in the body, and
 * refuses one carrying managedFields.
 */
function checkConfiguration(ctx: ClientContext, config: unknown): asserts config is ApplyConfiguration<KubeObject> {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new TypeError(`config: apply expects an object, got ${describeValue(config)}`);
  const c = config as Record<string, unknown>;
  const { group, version } = ctx.resource;
  const apiVersion = group === '' ? version : `${group}/${version}`;
  if (c['apiVersion'] !== apiVersion) throw new TypeError(`config.apiVersion: expected ${JSON.stringify(apiVersion)} for ${ctx.resource.name}, got ${describeValue(c['apiVersion'])}`);
  if (typeof c['kind'] !== 'string' || c['kind'] === '') throw new TypeError(`config.kind: apply needs the object's kind, got ${describeValue(c['kind'])}`);
  const meta = c['metadata'];
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw new TypeError(`config.metadata: expected an object with the name, got ${describeValue(meta)}`);
  const m = meta as Record<string, unknown>;
  checkName(m['name'], 'config.metadata.name');
  if (m['managedFields'] !== undefined) throw new TypeError('config.metadata.managedFields: the server keeps them; an apply must not send them');
}

/**
 * Sends a server-side apply of `config` (internal), to the object or to its
 * status subresource, through the client's one write path (docs/semantics.md W-4).
 */
export function applyRequest<T>(ctx: ClientContext, config: unknown, o: ApplyOptions | undefined, subresource: 'status' | undefined): Promise<T> {
  checkConfiguration(ctx, config);
  const force = checkBoolean(o?.force, 'force') ?? false;
  const name = config.metadata.name;
  const verb = subresource === undefined ? 'apply' : 'apply status of';
  const ns = ctx.namespaceOf(verb, name, (config.metadata as { namespace?: unknown }).namespace);
  return ctx.write<T>({
    verb: 'PATCH',
    url: ctx.itemUrl(name, ns, subresource),
    what: ctx.describe(verb, name, ns),
    namespace: ns,
    body: config,
    contentType: APPLY_PATCH,
    opts: o,
    force,
  });
}
