/**
 * The objects specs build. Each factory fills in what the test does not care about (the namespace
 * `default`, a container) and takes what it does; a spec that needs a special shape builds it itself.
 */

/** Metadata a spec may set on any factory's object. */
export interface Meta {
  /** @default 'default' */
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  /** The resourceVersion, as a server (or a scripted one) would have set it. */
  readonly rv?: string;
  readonly uid?: string;
}

function metadata(name: string, m: Meta) {
  return {
    name,
    namespace: m.namespace ?? 'default',
    ...(m.labels && { labels: m.labels }),
    ...(m.rv !== undefined && { resourceVersion: m.rv }),
    ...(m.uid !== undefined && { uid: m.uid }),
  };
}

/** An object that is only its metadata: what the store, the queues and the simulator need of any kind. */
export function obj(name: string, m: Meta = {}) {
  return { metadata: metadata(name, m) };
}

/** A minimal pod manifest: one container. */
export function pod(name: string, opts: Meta & { image?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata(name, opts),
    spec: { containers: [{ name: 'main', image: opts.image ?? 'busybox' }] },
  };
}

/** A ConfigMap manifest, with `data` when given. */
export function configMap(name: string, opts: Meta & { data?: Record<string, string> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(name, opts),
    ...(opts.data && { data: opts.data }),
  };
}
