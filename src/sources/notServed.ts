import type { KubeConfig } from '@kubernetes/client-node';
import { printable } from '../errors/printable.js';
import { getBody } from './http.js';
import { KubeApiError } from '../errors/api/KubeApiError.js';
import { ResourceNotServedError } from '../errors/api/ResourceNotServedError.js';
import type { ParsedResource } from './resourceRef.js';

/** A discovery document is tens of KiB; one larger than this is not read (CR-133). */
const MAX_DISCOVERY_BYTES = 4 * 1024 * 1024;
/** How long the discovery request may take before the plain 404 is kept. */
const DISCOVERY_TIMEOUT_MS = 10_000;
/** Resources of a group/version looked at; a real one has at most a few hundred. */
const MAX_RESOURCES = 2_000;
/** Names longer than this are not compared (a DNS-1123 label is at most 63 characters; resource names are labels). */
const MAX_NAME = 100;
const MAX_SUGGESTIONS = 3;
/** What a resource name, singular name, short name or kind may look like to be quoted back. */
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$/;

/** One served resource, as much of it as the suggestions (and `rxkube watch`'s name resolution) need. */
export interface ServedResource {
  readonly name: string;
  readonly singularName: string | undefined;
  readonly kind: string | undefined;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
}

/** What discovery said about a resource a list found missing. */
interface Explanation {
  readonly groupVersionServed: boolean;
  readonly suggestions: readonly string[];
}

/** Turns a list's 404 into a {@link ResourceNotServedError}, asking discovery once per failure streak (internal). */
export interface NotServedExplainer {
  /** `err` itself unless it is a 404, which comes back explained when discovery says the resource is not served. */
  explain(err: unknown, what: string, signal: AbortSignal): Promise<unknown>;
  /** A list was answered: the next 404 starts a new streak, with a new discovery request. */
  served(): void;
}

/**
 * The explainer of one source (CR-130…CR-133). The discovery answer of a
 * streak is kept until a list succeeds, so a list retried with backoff
 * costs one discovery request however long the resource stays missing.
 */
export function notServedExplainer(kc: KubeConfig, server: string, resource: ParsedResource): NotServedExplainer {
  const groupVersion = resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
  const url = `${server}${resource.group === '' ? `/api/${resource.version}` : `/apis/${groupVersion}`}`;
  let streak: Promise<Explanation | undefined> | undefined;
  return {
    served: () => {
      streak = undefined;
    },
    explain: async (err, what, signal) => {
      if (!(err instanceof KubeApiError) || err.status !== 404 || err instanceof ResourceNotServedError) return err;
      const asked = streak ?? discover(kc, url, resource.plural, groupVersion, signal);
      streak = asked;
      const found = await asked;
      // A discovery cut short by the caller's abort says nothing: the next 404 asks again.
      if (signal.aborted) {
        if (streak === asked) streak = undefined;
        return err;
      }
      if (found === undefined) return err;
      const text = describe(groupVersion, resource, found);
      return new ResourceNotServedError(err, `${what}: 404${err.reason === undefined ? '' : ` ${err.reason}`}: ${text}`, {
        groupVersion,
        resource: resource.plural,
        ...found,
      });
    },
  };
}

/** The sentence of CR-131. */
function describe(groupVersion: string, resource: ParsedResource, found: Explanation): string {
  // Custom resources live in groups with a dot; a built-in group (apps, batch, the core group) has no CRD to install.
  const hint = resource.group.includes('.') ? ': is the CRD installed?' : '';
  if (!found.groupVersionServed) return `the API server serves no group ${groupVersion}${hint}`;
  const guess = found.suggestions.length === 0 ? '' : `: did you mean ${found.suggestions.map((s) => `"${s}"`).join(' or ')}?`;
  return `${groupVersion} serves no resource "${printable(resource.plural)}"${guess}${guess === '' ? hint : hint.replace(/^:/, '')}`;
}

/**
 * Asks discovery about the group/version; undefined when its answer cannot
 * be had or trusted, or when it says the resource is served after all
 * (the 404 was about something else, or the CRD has just arrived).
 */
async function discover(kc: KubeConfig, url: string, plural: string, groupVersion: string, signal: AbortSignal): Promise<Explanation | undefined> {
  let text: string;
  try {
    const parts: Buffer[] = [];
    const bounds = { maxBytes: MAX_DISCOVERY_BYTES, timeoutMs: DISCOVERY_TIMEOUT_MS, timeoutPerMiBMs: 0 };
    for await (const chunk of getBody(kc, url, `discover ${groupVersion}`, signal, { idleTimeoutMs: DISCOVERY_TIMEOUT_MS, list: bounds })) parts.push(chunk);
    text = Buffer.concat(parts).toString('utf8');
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return { groupVersionServed: false, suggestions: [] };
    return undefined;
  }
  const served = servedResources(text);
  if (served === undefined || served.some((r) => r.name === plural)) return undefined;
  return { groupVersionServed: true, suggestions: suggest(plural, served) };
}

/** The resources of an `APIResourceList`, subresources left out; undefined when the text is not one. */
export function servedResources(text: string): ServedResource[] | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  return resourcesOfList(doc);
}

/**
 * The resources of a decoded `APIResourceList`, bounded and with only
 * well-formed names kept (CR-133); undefined when `doc` is not one.
 */
export function resourcesOfList(doc: unknown): ServedResource[] | undefined {
  const list = (doc as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(list)) return undefined;
  const name = (v: unknown): string | undefined => (typeof v === 'string' && v.length <= MAX_NAME && NAME.test(v) ? v : undefined);
  const out: ServedResource[] = [];
  for (const r of list.slice(0, MAX_RESOURCES) as unknown[]) {
    if (typeof r !== 'object' || r === null) continue;
    const e = r as Record<string, unknown>;
    const plural = name(e['name']);
    if (plural === undefined) continue;
    const shortNames = Array.isArray(e['shortNames']) ? (e['shortNames'] as unknown[]).slice(0, 20).flatMap((s) => name(s) ?? []) : [];
    out.push({ name: plural, singularName: name(e['singularName']), kind: name(e['kind']), namespaced: e['namespaced'] === true, shortNames });
  }
  return out;
}

/**
 * The served plurals `asked` may have meant, best first (CR-132): those
 * whose singular name, kind or a short name is `asked` (case aside), then
 * those within a small edit distance of it.
 */
export function suggest(asked: string, served: readonly ServedResource[]): string[] {
  const a = asked.toLowerCase();
  const exact = served.filter((r) => r.singularName?.toLowerCase() === a || r.kind?.toLowerCase() === a || r.name.toLowerCase() === a || r.shortNames.some((s) => s.toLowerCase() === a));
  if (exact.length > 0) return unique(exact.map((r) => r.name)).slice(0, MAX_SUGGESTIONS);
  if (a.length > MAX_NAME) return [];
  const limit = Math.max(2, Math.floor(a.length / 3));
  const near = served
    .map((r) => ({ name: r.name, d: distance(a, r.name.toLowerCase(), limit) }))
    .filter((r) => r.d <= limit)
    .sort((x, y) => x.d - y.d || (x.name < y.name ? -1 : 1));
  return unique(near.map((r) => r.name)).slice(0, MAX_SUGGESTIONS);
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

/** Optimal string alignment distance (a swap of neighbours counts once), or `limit + 1` once it must exceed `limit`. */
export function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] as number) + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}
