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
  if (p === '/apis') {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].filter(([g]) => g !== '').map(([name, vs]) => {
        const versions = [...vs].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
        return { name, versions, preferredVersion: versions[0] };
      }),
    };
  }
  const m = /^\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(p);
  if (m === null) return undefined;
  const group = m[1] !== undefined ? '' : (m[2] as string);
  const version = m[1] ?? (m[3] as string);
  if (!groups.get(group)?.has(version)) return undefined;
  const resources = [...registry.values()]
    .filter((t) => t.group === group && t.version === version)
    .flatMap((t) => [
      { name: t.plural, singularName: t.kind.toLowerCase(), namespaced: t.namespaced, kind: t.kind, verbs: VERBS },
      ...(t.statusSubresource ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
    ]);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
}
