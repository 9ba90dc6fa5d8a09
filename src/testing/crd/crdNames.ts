import { specOf } from './crdValidation.js';
import { isRecord } from '../writes/objectRules.js';

// Which of a CRD's requested names it may serve under, and the conditions that say so, as
// apiextensions' naming controller decides: a name another CRD of the same group already serves
// under is refused, the rest are accepted.

type AnyObject = Record<string, unknown>;

/** The names a CRD serves under (`status.acceptedNames`). */
export interface Names {
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly kind: string;
  readonly listKind: string;
  readonly categories: readonly string[];
}

/** One entry of a CRD's `status.conditions`. */
export interface CrdCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime?: string;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Names as a CRD's spec or status holds them, with the defaults of an absent singular and listKind. */
export function namesOf(value: unknown): Names {
  const n = isRecord(value) ? value : {};
  const kind = str(n['kind']);
  return {
    plural: str(n['plural']),
    singular: str(n['singular']) || kind.toLowerCase(),
    shortNames: strings(n['shortNames']),
    kind,
    listKind: str(n['listKind']) || (kind === '' ? '' : `${kind}List`),
    categories: strings(n['categories']),
  };
}

/** The outcome for one CRD: the names it gets and whether all it asked for were free. */
export interface Naming {
  readonly accepted: Names;
  readonly condition: CrdCondition;
}

/**
 * Decides a CRD's accepted names against the names the other CRDs of its
 * group serve under: a refused name keeps the value accepted before (none
 * for a new CRD); the condition names the last refused name.
 *
 * @param crd the CRD.
 * @param others the other CRDs of the cluster.
 */
export function decideNames(crd: AnyObject, others: readonly AnyObject[]): Naming {
  const spec = specOf(crd);
  const group = spec['group'];
  const requested = namesOf(spec['names']);
  const before = namesOf(isRecord(crd['status']) ? crd['status']['acceptedNames'] : undefined);
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const o of others) {
    if (specOf(o)['group'] !== group) continue;
    const n = namesOf(isRecord(o['status']) ? o['status']['acceptedNames'] : undefined);
    for (const r of [n.plural, n.singular, ...n.shortNames]) if (r !== '') resources.add(r);
    for (const k of [n.kind, n.listKind]) if (k !== '') kinds.add(k);
  }
  let conflict: { reason: string; name: string } | undefined;
  const pick = (wanted: string, previous: string, taken: Set<string>, reason: string): string => {
    if (!taken.has(wanted)) return wanted;
    conflict = { reason, name: wanted };
    return previous;
  };
  const shortTaken = requested.shortNames.find((s) => resources.has(s));
  const accepted: Names = {
    plural: pick(requested.plural, before.plural, resources, 'PluralConflict'),
    singular: pick(requested.singular, before.singular, resources, 'SingularConflict'),
    shortNames: shortTaken === undefined ? requested.shortNames : ((conflict = { reason: 'ShortNamesConflict', name: shortTaken }), before.shortNames),
    kind: pick(requested.kind, before.kind, kinds, 'KindConflict'),
    listKind: pick(requested.listKind, before.listKind, kinds, 'ListKindConflict'),
    categories: requested.categories,
  };
  const found = conflict as { reason: string; name: string } | undefined;
  const condition: CrdCondition =
    found === undefined
      ? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }
      : { type: 'NamesAccepted', status: 'False', reason: found.reason, message: `${JSON.stringify(found.name)} is already in use` };
  return { accepted, condition };
}

/** The wire form of accepted names: empty lists and an absent singular left out, as the server writes them. */
export function namesJson(n: Names): AnyObject {
  return {
    plural: n.plural,
    ...(n.singular === '' ? {} : { singular: n.singular }),
    ...(n.shortNames.length === 0 ? {} : { shortNames: n.shortNames }),
    kind: n.kind,
    ...(n.listKind === '' ? {} : { listKind: n.listKind }),
    ...(n.categories.length === 0 ? {} : { categories: n.categories }),
  };
}
