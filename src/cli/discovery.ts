/**
 * The resources a server serves, as discovery lists them, and kubectl's way
 * of naming one: plural, singular, short name or kind, alone or followed by
 * its group (`websites`, `website`, `ws`, `websites.example.com`). A name
 * that matches nothing is an error listing the close names the server does
 * serve (semantics CR-103…CR-106).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { sendJson } from '../client/request.js';
import { isNotFound } from '../errors/api/index.js';
import { printable } from '../errors/printable.js';
import { plainHttpAllowed } from '../sources/http.js';
import { distance, resourcesOfList } from '../sources/notServed.js';
import { UsageError } from './usage.js';

/** One resource a server serves, in its group's preferred version. */
export interface ServedResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
}

/** How long one discovery request may take. */
const DISCOVERY_TIMEOUT_MS = 15_000;

/** How many edits away a name may be to be suggested. */
const CLOSE = 2;

/** Groups asked for at once. */
const PARALLEL = 8;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The resources of one group version, read as a source reads discovery: bounded, subresources and ill-formed names left out. */
async function resourcesOf(kc: KubeConfig, base: string, group: string, version: string): Promise<ServedResource[]> {
  const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const list = await sendJson<unknown>(kc, { verb: 'GET', url: `${base}${path}`, what: `discovery ${path}`, body: undefined, signal: undefined, timeoutMs: DISCOVERY_TIMEOUT_MS });
  return (resourcesOfList(list) ?? []).map((r) => ({
    group,
    version,
    plural: r.name,
    singular: r.singularName ?? (r.kind ?? '').toLowerCase(),
    kind: r.kind ?? '',
    namespaced: r.namespaced,
    shortNames: r.shortNames,
  }));
}

/** The names a resource answers to, lower case. */
function namesOf(r: ServedResource): string[] {
  return [r.plural, r.singular, ...r.shortNames, r.kind].map((n) => n.toLowerCase()).filter((n) => n !== '');
}

/**
 * The served resource a name means, as kubectl reads it: the whole name as a
 * plural, singular, short name or kind; else the part before the first dot
 * as one of those and the rest as the group.
 *
 * @param name what the user typed.
 * @param served the resources discovery lists.
 * @returns the resource, or undefined.
 */
export function matchResource(name: string, served: readonly ServedResource[]): ServedResource | undefined {
  const lower = name.toLowerCase();
  const whole = served.find((r) => namesOf(r).includes(lower));
  if (whole !== undefined) return whole;
  const dot = lower.indexOf('.');
  if (dot <= 0) return undefined;
  const [resource, group] = [lower.slice(0, dot), lower.slice(dot + 1)];
  return served.find((r) => r.group === group && namesOf(r).includes(resource));
}

/**
 * Served resources whose names are close to `name` (within two edits, a swap
 * of neighbours counting as one, as a source's not-served suggestions count
 * them; or one starting with the other), as `plural.group`, closest first, at
 * most five.
 *
 * @param name what the user typed.
 * @param served the resources discovery lists.
 * @returns the suggestions.
 */
export function closeNames(name: string, served: readonly ServedResource[]): string[] {
  const lower = name.toLowerCase().split('.')[0] ?? '';
  const scored = served
    .map((r) => {
      const best = Math.min(...namesOf(r).map((n) => (n.startsWith(lower) || lower.startsWith(n) ? Math.min(1, distance(lower, n, 1)) : distance(lower, n, CLOSE))));
      return { full: r.group === '' ? r.plural : `${r.plural}.${r.group}`, best };
    })
    .filter((s) => s.best <= CLOSE && lower.length > 1);
  scored.sort((a, b) => a.best - b.best || a.full.localeCompare(b.full));
  return [...new Set(scored.map((s) => s.full))].slice(0, 5);
}

/**
 * Resolves a name through discovery, or throws a usage error saying what the
 * server serves instead.
 *
 * @param kc the cluster.
 * @param name what the user typed (`websites`, `ws`, `websites.example.com`).
 * @returns the resource.
 * @throws {UsageError} when the server serves nothing by that name.
 */
export async function resolveServed(kc: KubeConfig, name: string): Promise<ServedResource> {
  // Every resource the server serves, core group first, each group in its preferred version.
  const auth = plainHttpAllowed(kc);
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new UsageError('the kubeconfig has no current cluster');
  const base = server.replace(/\/+$/, '');
  const groups = await sendJson<{ groups?: unknown }>(auth, { verb: 'GET', url: `${base}/apis`, what: 'discovery /apis', body: undefined, signal: undefined, timeoutMs: DISCOVERY_TIMEOUT_MS });
  const wanted: [string, string][] = [['', 'v1']];
  for (const g of Array.isArray(groups.groups) ? (groups.groups as { name?: unknown; preferredVersion?: { version?: unknown } }[]) : []) {
    const version = str(g?.preferredVersion?.version);
    if (typeof g?.name === 'string' && version !== '') wanted.push([g.name, version]);
  }
  const groupsServed: ServedResource[][] = [];
  for (let i = 0; i < wanted.length; i += PARALLEL) {
    groupsServed.push(...(await Promise.all(wanted.slice(i, i + PARALLEL).map(([group, version]) => resourcesOf(auth, base, group, version)))));
  }
  const served = groupsServed.flat();
  const found = matchResource(name, served);
  if (found !== undefined) return found;
  const close = closeNames(name, served);
  const suggestion = close.length === 0 ? '' : ` did you mean ${close.map((n) => printable(n)).join(', ')}?`;
  throw new UsageError(`the server serves no resource ${JSON.stringify(printable(name))}:${suggestion} is the CRD installed?`);
}

/**
 * Reads one CustomResourceDefinition by name (`websites.example.com`).
 *
 * @param kc the cluster.
 * @param name the CRD's name.
 * @returns the CRD, or undefined when the server has none by that name.
 */
export async function readCrd(kc: KubeConfig, name: string): Promise<Record<string, unknown> | undefined> {
  const url = `${(kc.getCurrentCluster()?.server ?? '').replace(/\/+$/, '')}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(name)}`;
  try {
    return await sendJson<Record<string, unknown>>(plainHttpAllowed(kc), { verb: 'GET', url, what: `get customresourcedefinition ${printable(name)}`, body: undefined, signal: undefined, timeoutMs: DISCOVERY_TIMEOUT_MS });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
