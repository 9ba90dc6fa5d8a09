import type { ResourceRegistry } from '../storage/registry.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * The discovery document for a path (`/version`, `/api`, `/apis`,
 * `/api/v1`, `/apis/g/v`), built from the registered resources, or
 * undefined when the path is not a discovery path.
 *
 * @param pathname the request path.
 * @param registry the resources served.
 * @param port the port `/api` advertises.
 */
export function discoveryDocument(pathname: string, registry: ResourceRegistry, port: number): object | undefined {
  const p = pathname.replace(/\/+$/, '');
  if (p === '/version') {
    return { major: '1', minor: '34', gitVersion: 'v1.34.0-rxkube', platform: `${process.platform}/${process.arch}` };
  }
  const groups = new Map<string, Set<string>>();
  for (const t of registry.values()) {
    let versions = groups.get(t.group);
    if (versions === undefined) groups.set(t.group, (versions = new Set()));
    versions.add(t.version);
  }
  if (p === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${port}` }] };
  const apiGroup = (name: string, vs: Set<string>): object => {
    const versions = [...vs].sort(byVersionPriority).map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions, preferredVersion: versions[0] };
  };
  if (p === '/apis') {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...groups].filter(([g]) => g !== '').map(([name, vs]) => apiGroup(name, vs)) };
  }
  const g = /^\/apis\/([^/]+)$/.exec(p);
  if (g !== null) {
    const vs = groups.get(g[1] as string);
    return vs === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g[1] as string, vs) };
  }
  const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(p);
  if (m === null) return undefined;
  const group = m[1] !== undefined ? '' : (m[2] as string);
  const version = m[1] ?? (m[3] as string);
  if (!groups.get(group)?.has(version)) return undefined;
  const resources = [...registry.values()]
    .filter((t) => t.group === group && t.version === version)
    .flatMap((t) => [
      {
        name: t.plural,
        singularName: t.discovery?.singularName ?? t.kind.toLowerCase(),
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: VERBS,
        ...(t.discovery !== undefined && t.discovery.shortNames.length > 0 ? { shortNames: t.discovery.shortNames } : {}),
        ...(t.discovery !== undefined && t.discovery.categories.length > 0 ? { categories: t.discovery.categories } : {}),
      },
      ...(t.statusSubresource ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
      ...(t.scale !== undefined
        ? [{ name: `${t.plural}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] }]
        : []),
    ]);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Kubernetes' version priority, as discovery orders a group's versions:
 * GA before beta before alpha, higher numbers first, then versions that do
 * not look like Kubernetes versions, alphabetically.
 */
export function byVersionPriority(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = KUBE_VERSION.exec(v);
    if (m === null) return undefined;
    return [m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a);
  const rb = rank(b);
  if (ra === undefined || rb === undefined) return ra !== undefined ? -1 : rb !== undefined ? 1 : a < b ? -1 : a > b ? 1 : 0;
  return rb[0] - ra[0] || rb[1] - ra[1] || rb[2] - ra[2];
}
