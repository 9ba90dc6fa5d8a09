import type { KubeConfig } from '@kubernetes/client-node';
import { plainHttpAllowed } from '../sources/http.js';
import { clusterOf, resourceKey } from '../sources/identity.js';
import { parseResourceRef, resourcePath, type ParsedResource } from '../sources/resourceRef.js';
import type { ResourceRef } from '../sources/types.js';
import type { StatusDetails } from '../sources/errors/KubeApiError.js';
import type { KubeObject } from '../store/types.js';
import { recordAnswer } from './recordWrite.js';
import { sendJson, type Verb } from './request.js';

/**
 * How a {@link ObjectClient.patch} body is to be read by the server.
 *
 * `merge` sends an RFC 7386 merge patch (objects merge, `null` deletes, lists are replaced), `json` an RFC 6902
 * list of operations, `strategic` Kubernetes' strategic merge patch (lists of built-in types merge by key).
 *
 * ## Example
 * ```ts
 * import { objectClient, type PatchType } from 'rxkube';
 *
 * const type: PatchType = 'json';
 * await objectClient(kc, 'v1/pods', { namespace: 'default' }).patch('web', [{ op: 'remove', path: '/metadata/labels/old' }], { type });
 * ```
 */
export type PatchType = 'merge' | 'json' | 'strategic';

/**
 * Options every call of an {@link ObjectClient} takes.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 *
 * const pod = await objectClient(kc, 'v1/pods', { namespace: 'default' }).get('web', { signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface CallOptions {
  /** Aborts the request; the call then rejects with the signal's reason. @default undefined (no abort) */
  readonly signal?: AbortSignal;
}

/**
 * Options of {@link ObjectClient.patch}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 *
 * await objectClient(kc, 'v1/pods', { namespace: 'default' }).patch('web', { metadata: { labels: { shard: '3' } } }, { type: 'merge' });
 * ```
 */
export interface PatchOptions extends CallOptions {
  /**
   * `merge` (RFC 7386 JSON merge patch), `json` (RFC 6902 JSON patch: an array of operations) or `strategic`
   * (Kubernetes' strategic merge patch, built-in types only).
   * @default 'merge'
   */
  readonly type?: PatchType;
}

/**
 * Preconditions of a delete: the server refuses with 409 Conflict when the object no longer matches.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 *
 * await objectClient(kc, 'v1/configmaps', { namespace: 'default' }).delete('cfg', { preconditions: { uid: cm.metadata?.uid } });
 * ```
 */
export interface DeletePreconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/**
 * Options of {@link ObjectClient.delete}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 *
 * await objectClient(kc, 'apps/v1/deployments', { namespace: 'default' }).delete('web', { propagationPolicy: 'Foreground' });
 * ```
 */
export interface DeleteOptions extends CallOptions {
  /** Delete only if the object still has this uid and/or resourceVersion. @default undefined (unconditional) */
  readonly preconditions?: DeletePreconditions;
  /** What happens to dependents: `Orphan`, `Background` or `Foreground`. @default undefined (the resource's default) */
  readonly propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  /** Seconds of grace before the object is removed (pods). @default undefined (the object's own) */
  readonly gracePeriodSeconds?: number;
}

/**
 * Options of {@link objectClient}.
 *
 * ## Example
 * ```ts
 * import { objectClient } from 'rxkube';
 *
 * const secrets = objectClient(kc, 'v1/secrets', { namespace: 'prod', timeoutMs: 5_000 });
 * ```
 */
export interface ObjectClientOptions {
  /**
   * The namespace every call acts in. Required for namespaced resources, left out for cluster-scoped ones.
   * @default undefined (cluster scope)
   */
  readonly namespace?: string;
  /**
   * Milliseconds a call may take, from sending to the last byte of the answer; past it the call rejects with a
   * `ConnectionError` of code `TIMEOUT`.
   * @default 30_000
   */
  readonly timeoutMs?: number;
}

/**
 * Reads and writes single objects of one resource in one namespace. Created by {@link objectClient}.
 *
 * Each method sends one request and resolves the object the server answered (with its new
 * `metadata.resourceVersion`), or rejects with a typed error.
 *
 * ## Example
 * ```ts
 * import { objectClient, type ObjectClient } from 'rxkube';
 *
 * const cms: ObjectClient = objectClient(kc, 'v1/configmaps', { namespace: 'default' });
 * const created = await cms.create({ metadata: { name: 'cfg' } });
 * ```
 */
export interface ObjectClient<T extends KubeObject = KubeObject> {
  /** The resource this client acts on, parsed. */
  readonly resource: ParsedResource;
  /** The namespace, or undefined for cluster scope. */
  readonly namespace: string | undefined;
  /** GET one object by name. */
  get(name: string, opts?: CallOptions): Promise<T>;
  /** POST a new object; 409 AlreadyExists when the name is taken. */
  create(obj: T, opts?: CallOptions): Promise<T>;
  /** PUT the whole object; a `metadata.resourceVersion` makes it conditional (409 Conflict when stale). */
  replace(obj: T, opts?: CallOptions): Promise<T>;
  /** PATCH one object by name. */
  patch(name: string, body: unknown, opts?: PatchOptions): Promise<T>;
  /** DELETE one object by name; answers the object (being deleted, or gone) or the server's Status. */
  delete(name: string, opts?: DeleteOptions): Promise<T | StatusDetails>;
}

const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/**
 * A small typed client for single objects: get, create, replace, patch and
 * delete, the write half that informers do not cover (finalizers, labels,
 * status, Leases).
 *
 * Every call is one HTTP request with the kubeconfig's credentials (bearer
 * tokens, exec and OIDC plugins, client certificates, proxies), resolved
 * afresh for each request; the connection is closed when the call ends.
 * Answers other than 2xx reject with the typed error of their Status
 * (`NotFoundError` for 404, a `KubeApiError` of status 409 for a conflict or
 * an existing name, …); transport failures reject with `ConnectionError`.
 * Messages never carry a credential.
 *
 * Optimistic concurrency works as in client-go: `replace` with the
 * `metadata.resourceVersion` you read succeeds only if nobody wrote since.
 *
 * Every successful write (create, replace, patch, delete) is recorded in the
 * process's write log — cluster, resource, object and the answer's
 * resourceVersion — so that a `controller` reading an informer of that
 * resource waits, bounded, until its cache shows the write before its next
 * reconcile reads it (read your own writes, docs/semantics.md RYW-1).
 *
 * Answers are the server's JSON, parsed: with client-node's model types as
 * `T`, fields those types declare as `Date` (`creationTimestamp`…) hold
 * the RFC 3339 strings the server sent.
 *
 * ## Example
 * ```ts
 * import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
 * import { objectClient, isConflict } from 'rxkube';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const configMaps = objectClient<V1ConfigMap>(kc, 'v1/configmaps', { namespace: 'default' });
 * const cm = await configMaps.get('settings');
 * try {
 *   await configMaps.replace({ ...cm, data: { ...cm.data, mode: 'fast' } });
 * } catch (err) {
 *   if (isConflict(err)) console.log('someone else wrote first; read again and retry');
 *   else throw err;
 * }
 * await configMaps.patch('settings', { metadata: { labels: { tier: 'gold' } } }, { type: 'merge' });
 * ```
 *
 * @param kc The kubeconfig; its current context chooses cluster and user.
 * @param resource Which resource: `'v1/configmaps'`, `'coordination.k8s.io/v1/leases'` or `{ group, version, plural }`.
 * @param opts The namespace and the per-call timeout.
 * @returns The client.
 */
export function objectClient<T extends KubeObject = KubeObject>(kc: KubeConfig, resource: ResourceRef, opts: ObjectClientOptions = {}): ObjectClient<T> {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`objectClient: opts must be an object, got ${String(opts)}`);
  const parsed = parseResourceRef(resource);
  const namespace = opts.namespace;
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace === '')) {
    throw new TypeError(`namespace: expected a non-empty string, got ${JSON.stringify(namespace)}`);
  }
  if (namespace !== undefined && parsed.namespaced === false) {
    throw new TypeError(`namespace: ${parsed.name} is cluster-scoped, got namespace ${JSON.stringify(namespace)}`);
  }
  const timeoutMs = opts.timeoutMs ?? 30_000;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`timeoutMs: expected a positive number of milliseconds, got ${String(opts.timeoutMs)}`);
  }
  if (kc === null || typeof kc !== 'object' || typeof kc.getCurrentCluster !== 'function') {
    throw new TypeError(`kc: expected a KubeConfig, got ${String(kc)}`);
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new TypeError('kc: the kubeconfig has no current cluster');
  const base = `${cluster.server.replace(/\/+$/, '')}${resourcePath(parsed, namespace)}`;
  const auth = plainHttpAllowed(kc);
  const written = resourceKey({ cluster: clusterOf(cluster.server), group: parsed.group, plural: parsed.plural });

  const itemUrl = (name: string): string => {
    checkName(name);
    return `${base}/${encodeURIComponent(name)}`;
  };
  const call = <R>(verb: Verb, url: string, what: string, body: unknown, o: CallOptions | undefined, contentType?: string): Promise<R> => {
    const signal = checkSignal(o);
    return sendJson<R>(auth, { verb, url, what, body, contentType, signal, timeoutMs });
  };
  // Every write verb goes through here, so a controller can wait until its caches show what was written (RYW-1).
  const write = <R>(verb: Exclude<Verb, 'GET'>, name: string | undefined, url: string, what: string, body: unknown, o: CallOptions | undefined, contentType?: string): Promise<R> =>
    call<R>(verb, url, what, body, o, contentType).then((answer) => {
      recordAnswer(written, namespace, name, answer);
      return answer;
    });
  const describe = (verb: string, name: string): string =>
    `${verb} ${parsed.name} ${namespace === undefined ? '' : `${namespace}/`}${name}`;

  return {
    resource: parsed,
    namespace,
    get: (name, o) => call<T>('GET', itemUrl(name), describe('get', name), undefined, o),
    create: (obj, o) => {
      checkObject(obj, 'create', false);
      return write<T>('POST', obj.metadata?.name, base, describe('create', obj.metadata?.name ?? (obj.metadata as { generateName?: string } | undefined)?.generateName ?? ''), obj, o);
    },
    replace: (obj, o) => {
      checkObject(obj, 'replace', true);
      const name = obj.metadata?.name as string;
      return write<T>('PUT', name, itemUrl(name), describe('replace', name), obj, o);
    },
    patch: (name, body, o) => {
      const type = o?.type ?? 'merge';
      const contentType = PATCH_CONTENT_TYPES[type];
      if (contentType === undefined || !Object.hasOwn(PATCH_CONTENT_TYPES, type)) {
        throw new TypeError(`type: expected 'merge', 'json' or 'strategic', got ${JSON.stringify(type)}`);
      }
      if (type === 'json' ? !Array.isArray(body) : body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new TypeError(`body: a ${type} patch must be ${type === 'json' ? 'an array of operations' : 'an object'}, got ${describeValue(body)}`);
      }
      return write<T>('PATCH', name, itemUrl(name), describe('patch', name), body, o, contentType);
    },
    delete: (name, o) => {
      const url = itemUrl(name);
      const body = deleteBody(o);
      return write<T | StatusDetails>('DELETE', name, url, describe('delete', name), body, o);
    },
  };
}

function deleteBody(o: DeleteOptions | undefined): object | undefined {
  if (o === undefined) return undefined;
  const body: Record<string, unknown> = {};
  const pre = o.preconditions;
  if (pre !== undefined) {
    if (pre === null || typeof pre !== 'object') throw new TypeError(`preconditions: expected { uid?, resourceVersion? }, got ${String(pre)}`);
    for (const key of ['uid', 'resourceVersion'] as const) {
      const v = pre[key];
      if (v !== undefined && (typeof v !== 'string' || v === '')) throw new TypeError(`preconditions.${key}: expected a non-empty string, got ${describeValue(v)}`);
    }
    body['preconditions'] = { ...(pre.uid !== undefined && { uid: pre.uid }), ...(pre.resourceVersion !== undefined && { resourceVersion: pre.resourceVersion }) };
  }
  if (o.propagationPolicy !== undefined) {
    if (!['Orphan', 'Background', 'Foreground'].includes(o.propagationPolicy)) {
      throw new TypeError(`propagationPolicy: expected 'Orphan', 'Background' or 'Foreground', got ${describeValue(o.propagationPolicy)}`);
    }
    body['propagationPolicy'] = o.propagationPolicy;
  }
  if (o.gracePeriodSeconds !== undefined) {
    if (!Number.isSafeInteger(o.gracePeriodSeconds) || o.gracePeriodSeconds < 0) {
      throw new TypeError(`gracePeriodSeconds: expected a non-negative integer, got ${describeValue(o.gracePeriodSeconds)}`);
    }
    body['gracePeriodSeconds'] = o.gracePeriodSeconds;
  }
  return Object.keys(body).length === 0 ? undefined : { kind: 'DeleteOptions', apiVersion: 'v1', ...body };
}

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/')) {
    throw new TypeError(`name: expected an object name, got ${describeValue(name)}`);
  }
}

function checkObject(obj: KubeObject, verb: string, needsName: boolean): void {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new TypeError(`obj: ${verb} expects an object, got ${describeValue(obj)}`);
  if (needsName) checkName(obj.metadata?.name);
}

function checkSignal(o: CallOptions | undefined): AbortSignal | undefined {
  if (o === undefined) return undefined;
  if (o === null || typeof o !== 'object') throw new TypeError(`opts: expected an object, got ${String(o)}`);
  const s = o.signal;
  if (s !== undefined && !(s instanceof AbortSignal)) throw new TypeError(`signal: expected an AbortSignal, got ${describeValue(s)}`);
  return s;
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}
