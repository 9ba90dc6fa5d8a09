import { printable } from '../errors/printable.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { plainHttpAllowed } from '../sources/http.js';
import { clusterOf, resourceKey } from '../sources/identity.js';
import { parseResourceRef, resourcePath, type ParsedResource } from '../sources/resourceRef.js';
import { builtInScope, type BuiltInResource, type BuiltInResources, type CustomResourceRef, type TypedResource } from '../sources/resources.js';
import type { ResourceRef } from '../sources/types.js';
import type { ApiStatus } from '../errors/api/KubeApiError.js';
import type { KubeObject } from '../store/types.js';
import { applyRequest } from './apply.js';
import { checkBoolean, checkFieldManager, checkName, checkObject, checkSignal, deleteBody, patchContentType } from './checks.js';
import { listObjects } from './list.js';
import { recordAnswer } from './recordWrite.js';
import { sendJson } from './request.js';
import { statusMethods } from './status.js';
import type { CallOptions, ObjectClient, ObjectClientOptions, WriteOptions } from './types.js';
import type { ClientContext, WriteRequest } from './context.js';
import { describeValue } from '../options/validate.js';

/**
 * Sends one write (internal): create, replace, patch, apply, delete and the
 * status writes all come through here, so what every write needs — the
 * field manager, dry run, the checks of the call's options — is decided in
 * one place (docs/semantics.md W-3). Checks are synchronous: a bad option
 * throws before any request.
 */
function sendWrite<R>(ctx: ClientContext, req: WriteRequest): Promise<R> {
  const signal = checkSignal(req.opts);
  const dryRun = checkBoolean(req.opts?.dryRun, 'dryRun') ?? ctx.dryRun;
  const params = new URLSearchParams();
  if (dryRun) params.set('dryRun', 'All');
  if (req.verb !== 'DELETE') params.set('fieldManager', checkFieldManager((req.opts as WriteOptions | undefined)?.fieldManager) ?? ctx.fieldManager);
  if (req.force === true) params.set('force', 'true');
  const query = params.toString();
  const url = query === '' ? req.url : `${req.url}?${query}`;
  const sent = sendJson<R>(ctx.auth, { verb: req.verb, url, what: req.what, body: req.body, contentType: req.contentType, signal, timeoutMs: ctx.timeoutMs });
  if (dryRun) return sent;
  // Every write is recorded, so a controller can wait until its caches show it (RYW-1); a dry run wrote nothing.
  return sent.then((answer) => {
    recordAnswer(ctx.written, req.namespace, req.name, answer);
    return answer;
  });
}

/** Sends one GET (internal). */
function sendRead<R>(ctx: ClientContext, url: string, what: string, o: CallOptions | undefined): Promise<R> {
  const signal = checkSignal(o);
  return sendJson<R>(ctx.auth, { verb: 'GET', url, what, body: undefined, signal, timeoutMs: ctx.timeoutMs });
}

/**
 * A typed client for the objects of one resource: get, list, create,
 * replace, patch, server-side apply, delete, and the status subresource —
 * the write half that informers do not cover (finalizers, labels, status,
 * Leases, the objects a controller owns).
 *
 * The resource name gives the object type, as for `kubeSource`:
 * `objectClient(kc, 'v1/configmaps')` is an `ObjectClient<V1ConfigMap>`,
 * and a custom resource takes its type argument
 * (`objectClient<Widget>(kc, 'example.com/v1/widgets')`).
 *
 * Every call is one HTTP request (a list, one per page) with the
 * kubeconfig's credentials (bearer tokens, exec and OIDC plugins, client
 * certificates, proxies), resolved afresh for each request; the connection
 * is closed when the call ends. Answers other than 2xx reject with the
 * `KubeApiError` of their Status (tell them apart with `isNotFound`,
 * `isConflict`, `isAlreadyExists`, …); transport failures
 * reject with `ConnectionError`. Messages never carry a credential.
 *
 * Every write names its field manager (`fieldManager`, default `'rxkube'`)
 * and can be a dry run. Optimistic concurrency works as in client-go:
 * `replace` with the `metadata.resourceVersion` you read succeeds only if
 * nobody wrote since. `apply` is server-side apply: the server merges what
 * you send and records which manager owns which field.
 *
 * Answers are the server's JSON, parsed: with client-node's model types as
 * `T`, fields those types declare as `Date` (`creationTimestamp`…) hold
 * the RFC 3339 strings the server sent.
 *
 * ## Example
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { objectClient, isConflict } from 'rxkube';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const configMaps = objectClient(kc, 'v1/configmaps', { namespace: 'default', fieldManager: 'my-controller' });
 * await configMaps.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { mode: 'fast' } }, { force: true });
 * const cm = await configMaps.get('settings');
 * try {
 *   await configMaps.replace({ ...cm, data: { ...cm.data, mode: 'slow' } });
 * } catch (err) {
 *   if (isConflict(err)) console.log('someone else wrote first; read again and retry');
 *   else throw err;
 * }
 * ```
 *
 * @param kc The kubeconfig; its current context chooses cluster and user.
 * @param resource Which resource: `'v1/configmaps'`, `'coordination.k8s.io/v1/leases'`, `'example.com/v1/widgets'`, `{ group, version, plural }`,
 *   or a `customResource` definition, whose object type the client takes (`apply` then checks every field).
 * @param opts The namespace, the per-call timeout, the field manager and dry run of every write.
 * @returns The client.
 */
export function objectClient<R extends BuiltInResource>(kc: KubeConfig, resource: R, opts?: ObjectClientOptions): ObjectClient<BuiltInResources[R]>;
export function objectClient<T extends KubeObject>(kc: KubeConfig, resource: TypedResource<T>, opts?: ObjectClientOptions): ObjectClient<T>;
export function objectClient<T extends KubeObject = KubeObject>(kc: KubeConfig, resource: CustomResourceRef, opts?: ObjectClientOptions): ObjectClient<T>;
export function objectClient(kc: KubeConfig, resource: ResourceRef, opts: ObjectClientOptions = {}): ObjectClient {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`objectClient: opts must be an object, got ${describeValue(opts)}`);
  const ref = parseResourceRef(resource);
  const parsed: ParsedResource = ref.namespaced === undefined ? { ...ref, namespaced: builtInScope(ref.name) } : ref;
  const namespace = opts.namespace;
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace === '')) {
    throw new TypeError(`namespace: expected a non-empty string, got ${describeValue(namespace)}`);
  }
  if (namespace !== undefined && parsed.namespaced === false) {
    throw new TypeError(`namespace: ${parsed.name} is cluster-scoped, got namespace ${JSON.stringify(namespace)}`);
  }
  const timeoutMs = opts.timeoutMs ?? 30_000;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`timeoutMs: expected a positive number of milliseconds, got ${describeValue(opts.timeoutMs)}`);
  }
  const fieldManager = checkFieldManager(opts.fieldManager) ?? 'rxkube';
  const dryRun = checkBoolean(opts.dryRun, 'dryRun') ?? false;
  if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') {
    throw new TypeError(`kc: expected a KubeConfig, got ${describeValue(kc)}`);
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new TypeError('kc: the kubeconfig has no current cluster');
  const server = cluster.server.replace(/\/+$/, '');
  const collectionUrl = (ns: string | undefined): string => `${server}${resourcePath(parsed, ns)}`;
  // An object's name may come from a hostile list (HI-70): what starts every error message is escaped.
  const describe = (verb: string, name: unknown, ns: string | undefined): string =>
    printable(`${verb} ${parsed.name} ${ns === undefined ? '' : `${ns}/`}${typeof name === 'string' ? name.slice(0, 253) : ''}`);
  const missing = (verb: string, name: unknown, orObject: boolean): TypeError =>
    new TypeError(
      `${describe(verb, name, undefined)}: objectClient(kc, '${parsed.name}'): a namespaced resource needs a namespace: pass { namespace }${orObject ? ' or set metadata.namespace' : ''}`,
    );
  const ctx: ClientContext = {
    resource: parsed,
    namespace,
    kc,
    auth: plainHttpAllowed(kc),
    timeoutMs,
    fieldManager,
    dryRun,
    written: resourceKey({ cluster: clusterOf(cluster.server), group: parsed.group, plural: parsed.plural }),
    write: (req) => sendWrite(ctx, req),
    read: (url, what, o) => sendRead(ctx, url, what, o),
    collectionUrl,
    itemUrl: (name, ns, subresource) => {
      checkName(name);
      return `${collectionUrl(ns)}/${encodeURIComponent(name)}${subresource === undefined ? '' : `/${subresource}`}`;
    },
    namespaceByName: (verb, name) => {
      if (namespace === undefined && parsed.namespaced === true) throw missing(verb, name, false);
      return namespace;
    },
    namespaceOf: (verb, name, objectNamespace) => {
      if (objectNamespace !== undefined && (typeof objectNamespace !== 'string' || objectNamespace === '')) {
        throw new TypeError(`metadata.namespace: expected a non-empty string, got ${describeValue(objectNamespace)}`);
      }
      if (objectNamespace !== undefined && parsed.namespaced === false) {
        throw new TypeError(`metadata.namespace: ${parsed.name} is cluster-scoped, got namespace ${describeValue(objectNamespace)}`);
      }
      if (objectNamespace !== undefined && namespace !== undefined && objectNamespace !== namespace) {
        throw new TypeError(`${describe(verb, name, namespace)}: the object's metadata.namespace ${describeValue(objectNamespace)} is not the client's namespace ${describeValue(namespace)}`);
      }
      const ns = namespace ?? objectNamespace;
      if (ns === undefined && parsed.namespaced === true) throw missing(verb, name, true);
      return ns;
    },
    describe,
  };
  /** The name and namespace of an object a call is given. */
  const target = (verb: string, obj: KubeObject, needsName: boolean): { name: string; ns: string | undefined } => {
    checkObject(obj, verb, needsName);
    const meta = obj.metadata as { name?: string; generateName?: string; namespace?: unknown } | undefined;
    const name = meta?.name ?? meta?.generateName ?? '';
    return { name, ns: ctx.namespaceOf(verb, name, meta?.namespace) };
  };

  return {
    resource: parsed,
    namespace,
    get: (name, o) => {
      const ns = ctx.namespaceByName('get', name);
      return ctx.read(ctx.itemUrl(name, ns), describe('get', name, ns), o);
    },
    list: (o) => listObjects(ctx, o),
    create: (obj, o) => {
      const { name, ns } = target('create', obj, false);
      return ctx.write({ verb: 'POST', url: collectionUrl(ns), what: describe('create', name, ns), body: obj, opts: o, namespace: ns });
    },
    replace: (obj, o) => {
      const { name, ns } = target('replace', obj, true);
      return ctx.write({ verb: 'PUT', url: ctx.itemUrl(name, ns), what: describe('replace', name, ns), body: obj, opts: o, namespace: ns });
    },
    patch: (name, body, o) => {
      const ns = ctx.namespaceByName('patch', name);
      const contentType = patchContentType(o?.type, body);
      return ctx.write({ verb: 'PATCH', url: ctx.itemUrl(name, ns), what: describe('patch', name, ns), body, contentType, opts: o, namespace: ns });
    },
    apply: (config, o) => applyRequest(ctx, config, o, undefined),
    delete: (nameOrObject, o) => {
      const { name, ns } =
        typeof nameOrObject === 'object' && nameOrObject !== null ? target('delete', nameOrObject, true) : { name: nameOrObject, ns: ctx.namespaceByName('delete', nameOrObject) };
      const url = ctx.itemUrl(name, ns);
      return ctx.write<KubeObject | ApiStatus>({ verb: 'DELETE', url, what: describe('delete', name, ns), body: deleteBody(o), opts: o, name, namespace: ns });
    },
    ...statusMethods(ctx),
  };
}
