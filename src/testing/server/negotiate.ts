import type { ResourceType } from '../storage/resources.js';
import { StatusError } from './status.js';

/** The meta.k8s.io versions kube-apiserver converts objects into. */
export type MetaVersion = 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';

/**
 * The conversion an `Accept` header asked for (its `as`, `g` and `v`
 * parameters), when the simulator can perform it. Table is served for
 * resources with printer columns (custom resources); others are answered
 * unconverted (the simulator has no built-in printers).
 */
export interface Conversion {
  readonly kind: 'PartialObjectMetadata' | 'PartialObjectMetadataList' | 'Table';
  readonly apiVersion: MetaVersion;
}

/** One clause of an Accept header. */
interface Clause {
  readonly type: string;
  readonly subType: string;
  readonly q: number;
  readonly params: ReadonlyMap<string, string>;
}

/** The media types kube-apiserver serves, in the order its 406 lists them; only JSON is written by the simulator. */
const SERIALIZERS = [
  { type: 'application', subType: 'json', stream: true, custom: true },
  { type: 'application', subType: 'yaml', stream: false, custom: true },
  { type: 'application', subType: 'vnd.kubernetes.protobuf', stream: true, custom: false },
] as const;

const NOT_ACCEPTABLE = `only the following media types are accepted: ${SERIALIZERS.map((s) => `${s.type}/${s.subType}`).join(', ')}`;
const NOT_ACCEPTABLE_STREAM = `only the following media types are accepted: ${SERIALIZERS.filter((s) => s.stream)
  .map((s) => `${s.type}/${s.subType};stream=watch`)
  .join(', ')}`;

/** Parses an Accept header the way kube-apiserver's negotiation does: q-ordered, the more specific first on ties. */
function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...rest] = part.split(';');
    const trimmed = range.trim();
    if (trimmed === '') continue;
    const slash = trimmed.indexOf('/');
    const type = slash < 0 ? trimmed : trimmed.slice(0, slash);
    const subType = slash < 0 ? '*' : trimmed.slice(slash + 1);
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rest) {
      const eq = p.indexOf('=');
      const key = (eq < 0 ? p : p.slice(0, eq)).trim();
      const value = eq < 0 ? '' : p.slice(eq + 1).trim();
      if (key === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
      else if (key !== '') params.set(key, value);
    }
    clauses.push({ type, subType, q, params });
  }
  const rank = (c: Clause): number => (c.type === '*' ? 0 : 2) + (c.subType === '*' ? 0 : 1);
  return clauses.map((c, i) => ({ c, i })).sort((a, b) => b.c.q - a.c.q || rank(b.c) - rank(a.c) || a.i - b.i).map((x) => x.c);
}

/** Whether one clause can be served by one serializer, and with which conversion (null: refused). */
function acceptClause(clause: Clause, s: (typeof SERIALIZERS)[number], type: ResourceType): { convert: Conversion | undefined } | null {
  let kind: string | undefined;
  let group: string | undefined;
  let version: string | undefined;
  for (const [k, v] of clause.params) {
    if (k === 'as') kind = v;
    else if (k === 'g') group = v;
    else if (k === 'v') version = v;
    else if (k === 'stream' && v !== '' && (!s.stream || v !== 'watch')) return null;
    else if (k === 'sv' && v !== '' && v !== 'v1') return null;
  }
  if (kind === undefined && group === undefined && version === undefined) {
    // Custom resources have no protobuf encoding.
    return s.custom || type.builtIn ? { convert: undefined } : null;
  }
  if (group !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1')) return null;
  const apiVersion: MetaVersion = `meta.k8s.io/${version}`;
  if (kind === 'PartialObjectMetadata' || kind === 'PartialObjectMetadataList') return { convert: { kind, apiVersion } };
  // Every served resource can be printed as a Table in JSON or YAML; the simulator prints those with columns
  // (custom resources) and answers the objects of the others.
  if (kind === 'Table' && s.subType !== 'vnd.kubernetes.protobuf') return { convert: type.columns === undefined ? undefined : { kind, apiVersion } };
  return null;
}

/**
 * Negotiates the response of an object, list or watch request from its
 * `Accept` header as kube-apiserver does: the first clause (by q, then
 * specificity) that a serializer can satisfy wins; `as=PartialObjectMetadata`
 * and `as=PartialObjectMetadataList` in `meta.k8s.io/v1` (or `v1beta1`) ask
 * for metadata-only objects; when no clause can be served the answer is 406
 * NotAcceptable. YAML, protobuf and Table are accepted but answered in JSON
 * with the objects (a documented difference of the simulator).
 *
 * A watch negotiated to a media type without a streaming form (YAML) is 406
 * too, naming the streaming types, as kube-apiserver's watch handler does.
 *
 * @param accept the request's Accept header.
 * @param type the resource the request is about.
 * @param watch whether the request is a watch.
 * @returns the conversion asked for, or undefined for the objects as stored.
 * @throws StatusError 406 NotAcceptable.
 */
export function negotiate(accept: string | undefined, type: ResourceType, watch = false): Conversion | undefined {
  if (accept === undefined || accept.trim() === '') return undefined;
  for (const clause of parseAccept(accept)) {
    for (const s of SERIALIZERS) {
      const matches =
        (clause.type === s.type && (clause.subType === s.subType || clause.subType === '*')) || (clause.type === '*' && clause.subType === '*');
      if (!matches) continue;
      const accepted = acceptClause(clause, s, type);
      if (accepted === null) continue;
      if (watch && !s.stream) throw new StatusError(406, 'NotAcceptable', NOT_ACCEPTABLE_STREAM);
      return accepted.convert;
    }
  }
  throw new StatusError(406, 'NotAcceptable', NOT_ACCEPTABLE);
}

/** The Go type kube-apiserver names in a conversion error: the internal type of a built-in resource, unstructured otherwise. */
function goType(type: ResourceType, list: boolean): string {
  if (!type.builtIn) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const pkg = type.group === '' ? 'core' : (type.group.split('.')[0] as string);
  return `*${pkg}.${list ? type.listKind : type.kind}`;
}

/**
 * The meta.k8s.io version a single object is written in, or undefined for
 * the object itself; a list conversion asked of one object is 406, as
 * kube-apiserver answers after performing the request.
 */
export function objectView(convert: Conversion | undefined, type: ResourceType): MetaVersion | undefined {
  if (convert === undefined || convert.kind === 'Table') return undefined;
  if (convert.kind === 'PartialObjectMetadataList') {
    throw new StatusError(406, 'NotAcceptable', `you requested PartialObjectMetadataList, but the requested object is not a list (${goType(type, false)})`);
  }
  return convert.apiVersion;
}

/** The meta.k8s.io version a list is written in; an object conversion asked of a list is 406. */
export function listView(convert: Conversion | undefined, type: ResourceType): MetaVersion | undefined {
  if (convert === undefined || convert.kind === 'Table') return undefined;
  if (convert.kind === 'PartialObjectMetadata') {
    throw new StatusError(406, 'NotAcceptable', `you requested PartialObjectMetadata, but the requested object is a list (${goType(type, true)})`);
  }
  return convert.apiVersion;
}

/**
 * The meta.k8s.io version the objects of watch events are written in.
 * kube-apiserver converts each event's object on its own: a list conversion
 * fails for every one of them, and it then sends the object unconverted.
 */
export function watchView(convert: Conversion | undefined): MetaVersion | undefined {
  return convert?.kind === 'PartialObjectMetadata' ? convert.apiVersion : undefined;
}
