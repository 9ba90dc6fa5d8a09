import { parseFieldSelector, type FieldSelector } from '../../store/fieldSelector.js';
import { parseLabelSelector, type LabelSelector } from '../../store/labelSelector.js';
import type { ServerContext } from '../context.js';
import { decodeContinue, encodeContinue } from './continueToken.js';
import type { StoredObject } from '../storage/storedObject.js';
import { listView, type Conversion } from '../server/negotiate.js';
import { listItemJson, listJson } from '../server/partialObjectMetadata.js';
import { badRequest, invalid, tooLargeResourceVersion } from '../server/status.js';
import type { Preconditions } from '../storage/storage.js';
import { keyRange, lowerBound } from '../storage/storageKeys.js';
import { parseRv, type Target } from '../server/target.js';
import { passes, type ObjectFilter } from '../watch/watch.js';

const LIST_OPTIONS = 'ListOptions.meta.k8s.io ""';

/** The namespace and selectors of a list, watch or collection delete; 400 for a selector that does not parse or names an unsupported field. */
export function filterFor(target: Target, q: URLSearchParams): ObjectFilter {
  const labelText = q.get('labelSelector') ?? '';
  const fieldText = q.get('fieldSelector') ?? '';
  let label: LabelSelector | undefined;
  let field: FieldSelector | undefined;
  try {
    if (labelText !== '') label = parseLabelSelector(labelText);
    if (fieldText !== '') field = parseFieldSelector(fieldText);
  } catch (err) {
    throw badRequest(`unable to parse requirement: ${err instanceof Error ? err.message : String(err)}`);
  }
  const unsupported = field?.requirements.find((r) => !target.type.fields.has(r.field));
  if (unsupported !== undefined) throw badRequest(`field label not supported: ${unsupported.field}`);
  return {
    namespace: target.namespace,
    label: label === undefined || label.empty ? undefined : label,
    field: field === undefined || field.empty ? undefined : field,
  };
}

/**
 * Serves a LIST: paged from a consistent snapshot with continue tokens,
 * honouring resourceVersion and resourceVersionMatch as kube-apiserver does.
 *
 * @param convert the conversion the client negotiated; PartialObjectMetadataList lists metadata only.
 * @returns the list body.
 */
export function listBody(ctx: ServerContext, target: Target, q: URLSearchParams, convert: Conversion | undefined): string {
  const { storage } = ctx;
  const type = target.type;
  const filter = filterFor(target, q);
  const limitText = q.get('limit') ?? '';
  const limit = limitText === '' ? 0 : Number(limitText);
  if (!Number.isSafeInteger(limit)) throw badRequest(`limit: invalid value ${JSON.stringify(limitText)}`);
  const rvText = q.get('resourceVersion') ?? '';
  const match = q.get('resourceVersionMatch') ?? '';
  const cont = q.get('continue') ?? '';
  let snapRv: number | undefined;
  let read: 'exact' | 'continue' | undefined;
  let start: string | undefined;
  if (cont !== '') {
    if (rvText !== '' && rvText !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    if (match !== '') throw invalid(LIST_OPTIONS, 'resourceVersionMatch', 'Forbidden: resourceVersionMatch is forbidden when continue is provided');
    const pos = decodeContinue(cont);
    snapRv = pos.rv;
    start = pos.start;
    read = 'continue';
  } else {
    if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
      throw invalid(LIST_OPTIONS, 'resourceVersionMatch', `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
    }
    if (match !== '' && rvText === '') {
      throw invalid(LIST_OPTIONS, 'resourceVersionMatch', 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (match === 'Exact' && rvText === '0') {
      throw invalid(LIST_OPTIONS, 'resourceVersionMatch', 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    }
    if (rvText !== '' && rvText !== '0') {
      const rv = parseRv(rvText);
      // Without resourceVersionMatch, a paged list at an explicit resourceVersion is an exact read (the legacy rule).
      if (match === 'Exact' || (match === '' && limit > 0)) {
        snapRv = rv;
        read = 'exact';
      } else if (rv > storage.resourceVersion) throw tooLargeResourceVersion(rv, storage.resourceVersion);
    }
  }
  const snap = storage.snapshot(type, snapRv, read);
  // An object conversion of a list is 406, but only once the list itself was servable.
  const view = listView(convert, type);
  const keys = snap.keys;
  const [from, to] = keyRange(keys, type, filter.namespace);
  let i = start === undefined ? from : Math.max(from, lowerBound(keys, start));
  const items: string[] = [];
  let lastKey: string | undefined;
  for (; i < to; i++) {
    const key = keys[i] as string;
    const o = snap.at(i);
    if (o === undefined || !passes(filter, o)) continue;
    items.push(listItemJson(o, type, view));
    if (limit > 0 && items.length >= limit) {
      lastKey = key;
      i++;
      break;
    }
  }
  const meta: string[] = [`"resourceVersion":"${snap.rv}"`];
  if (lastKey !== undefined && i < to) {
    meta.push(`"continue":${JSON.stringify(encodeContinue(snap.rv, lastKey))}`);
    if (filter.label === undefined && filter.field === undefined) meta.push(`"remainingItemCount":${to - i}`);
  }
  return listJson(type, view, meta, items);
}

/** Serves a DELETE on a collection: deletes every matching object and answers the list of what was deleted. */
export function deleteCollectionBody(
  ctx: ServerContext,
  target: Target,
  q: URLSearchParams,
  preconditions: Preconditions | undefined,
  convert: Conversion | undefined,
): string {
  const type = target.type;
  const filter = filterFor(target, q);
  const deleted: StoredObject[] = [];
  for (const o of ctx.storage.list(type, filter.namespace)) {
    if (passes(filter, o)) deleted.push(ctx.namespaces.delete(type, o.namespace, o.name, preconditions));
  }
  // Like kube-apiserver, the deletions happen before the result is converted (and perhaps refused).
  const view = listView(convert, type);
  return listJson(type, view, [`"resourceVersion":"${ctx.storage.resourceVersion}"`], deleted.map((o) => listItemJson(o, type, view)));
}
