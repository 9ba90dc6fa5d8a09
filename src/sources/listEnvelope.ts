// The envelope of a LIST body (everything but its items): its type, how a key
// is read, and which values of kind, apiVersion, metadata and items are
// accepted. Internal, except the ListEnvelope type (re-exported by
// listDecoder.ts).

import { DecodeError } from '../errors/api/DecodeError.js';
import type { ObjectList } from './types.js';

/** Everything of a LIST body except its items. */
export interface ListEnvelope {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectList<unknown>['metadata'];
}

/** The envelope as the decoder fills it in, field by field. */
export interface EnvelopeFields {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown>;
}

/** Reads a key as JSON does (escapes resolved), so `"\u0069tems"` is `items`; `position` is its opening quote's. */
export function envelopeKey(raw: string, position: number): string {
  let key = raw;
  if (/[\\\u0000-\u001f]/.test(raw)) {
    try {
      key = JSON.parse(`"${raw}"`) as string;
    } catch (cause) {
      throw new DecodeError('list body has a malformed key', raw, position, { cause });
    }
  }
  return key;
}

/** Parses the JSON `text` of the value of envelope key `key` and records it in `envelope`; throws DecodeError. */
export function setEnvelopeField(envelope: EnvelopeFields, key: string, text: string, position: number): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new DecodeError(`list body has malformed ${key}`, text, position, { cause });
  }
  if (key === 'metadata') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new DecodeError('list metadata is not an object', text, position);
    }
    envelope.metadata = listMeta(value as Record<string, unknown>, text, position);
  } else if (key === 'items') {
    // `"items": null` is how some servers write an empty list; anything else is not a list.
    if (value !== null) throw new DecodeError('list items is not an array', text, position);
  } else if (key === 'kind' || key === 'apiVersion') {
    // A later duplicate wins, as in JSON.parse; one that is not a string leaves the field unset.
    if (typeof value === 'string') envelope[key] = value;
    else delete envelope[key];
  }
}

/**
 * Checks the fields of ListMeta rxkube reads, as Go's decoder would: a
 * resourceVersion or continue token that is not a string (a number such as
 * `1e999` would come back as "Infinity" in the next request) or a
 * remainingItemCount that is not an integer is a DecodeError; `null` means
 * absent, as it does to Go.
 */
function listMeta(meta: Record<string, unknown>, text: string, position: number): Record<string, unknown> {
  for (const key of ['resourceVersion', 'continue', 'remainingItemCount'] as const) {
    const v = meta[key];
    if (v === null) delete meta[key];
    else if (v !== undefined && (key === 'remainingItemCount' ? !Number.isInteger(v) : typeof v !== 'string')) {
      throw new DecodeError(`list metadata.${key} is not ${key === 'remainingItemCount' ? 'an integer' : 'a string'}`, text, position);
    }
  }
  return meta;
}
