/**
 * Decoding a MODIFIED watch event against the object a cache already holds
 * under its namespace and name: each top-level member after the metadata
 * whose bytes spell that object's own member exactly (`sameJson`) is
 * replaced by a placeholder before the parse, and the cached part, already
 * frozen, is put in its place afterwards. An update that changed only its
 * metadata and status parses neither its spec nor, in the store, compares
 * it again (docs/semantics.md PF-50). Internal: the watch decoder uses it.
 */
import { randomBytes } from 'node:crypto';
import { COLON, COMMA, isJsonSpace, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, skipSpace } from './jsonBytes.js';
import { containerEnd, equalsBytes, memberSpan, stringEnd, textWithout } from './managedFieldsStrip.js';
import { memberEnd, sameMember } from './sameJson.js';

/**
 * What a cache holds under an object's namespace (undefined for a
 * cluster-scoped one) and name: the object itself, deeply frozen, or
 * undefined. A decoding hint a watch's consumer may give its source; one
 * that throws is taken as finding nothing.
 *
 * ## Example
 * ```ts
 * import type { CachedLookup } from 'rxkube/core';
 * const cache = new Map<string, object>();
 * const cached: CachedLookup = (namespace, name) => cache.get(namespace === undefined ? name : `${namespace}/${name}`);
 * ```
 */
export type CachedLookup = (namespace: string | undefined, name: string) => unknown;

/** The text left to parse, and the cached members to put into the parsed object under their keys. */
export interface CachedParts {
  readonly text: string;
  readonly keys: readonly string[];
  readonly parts: readonly unknown[];
}

/** What {@link CachedReader.read} gives for an event it read whole and found nothing in to take or cut: parse the line as it is. */
export const NOTHING: CachedParts = Object.freeze({ text: '', keys: [], parts: [] });

/**
 * What a taken member is written as in the text that is parsed: a string no JSON can name without knowing it (a NUL
 * and 128 random bits, made once per process). After the parse, a key holds it only where the member written last
 * under that key (JSON's last duplicate wins) was one taken, and only there is the cached part put in its place.
 */
export const PLACEHOLDER = `\u0000${randomBytes(16).toString('hex')}`;
const PLACEHOLDER_JSON = Buffer.from(JSON.stringify(PLACEHOLDER));

/** After this many differences in a row, a member is compared only once in {@link RETRY_EVERY} events. */
const MISSES_BEFORE_RESTING = 4;
const RETRY_EVERY = 16;
/** The most member names whose differences are remembered at once. */
const MAX_REMEMBERED = 256;

const TYPE = Buffer.from('type');
const OBJECT = Buffer.from('object');
const MODIFIED = Buffer.from('MODIFIED');
const METADATA = Buffer.from('metadata');
const NAME = Buffer.from('name');
const NAMESPACE = Buffer.from('namespace');
const MANAGED_FIELDS = Buffer.from('managedFields');

/**
 * Reads MODIFIED events against the cache, for one watch. It remembers, by
 * member name, how often a member differed: a member that differed four
 * times in a row (a spec that changes on every update) is compared again
 * only once in sixteen events, and otherwise walked over. After four events
 * in a row with nothing to take (a metadata-only watch, a Lease whose spec
 * is renewed on every update), it reads only one event in sixteen this way,
 * comparing every member, and leaves the rest to the plain decode, until one
 * has something to take again: an update whose every member changed costs
 * little more than before.
 */
export class CachedReader {
  readonly #cached: CachedLookup;
  /** Differences in a row, by member name. */
  readonly #misses = new Map<string, number>();
  #events = 0;
  /** MODIFIED events in a row that had nothing to take, and how many were since left to the plain decode. */
  #idle = 0;
  #rested = 0;

  constructor(cached: CachedLookup) {
    this.#cached = cached;
  }

  /**
   * The text of the watch event in `buf[start, end)` with each member of
   * its object that the cached object holds unchanged written as
   * {@link PLACEHOLDER} (and its `metadata.managedFields` left out, with
   * `strip`), and the parts to put in their places; {@link NOTHING} when the
   * event was read and there is nothing to take or cut; undefined when the
   * event is not one to read this way, and is decoded as ever. Only a
   * MODIFIED event whose `type` comes before its `object` is read this way,
   * only members after the metadata are compared, and only when every key
   * on the way is written plainly (printable ASCII, no escape), the object
   * is the event's only one, and its metadata repeats none of `name`,
   * `namespace` and `managedFields`. `__proto__` is never taken.
   *
   * @param buf the bytes
   * @param start where the event begins
   * @param end just past its last byte
   * @param strip leave `metadata.managedFields` out, as the decoder was asked
   */
  read(buf: Buffer, start: number, end: number, strip: boolean): CachedParts | undefined {
    // Events that had nothing to take, again and again (a metadata-only watch, a resource whose every member
    // changes): most are decoded as ever, without this walk.
    const probing = this.#idle >= MISSES_BEFORE_RESTING;
    if (probing && ++this.#rested % RETRY_EVERY !== 0) return undefined;
    const at = skipSpace(buf, start, end);
    if (buf[at] !== LBRACE) return undefined;
    let modified = false;
    let object: ObjectParts | undefined;
    const closed = members(buf, at, end, (key, keyEnd, v) => {
      if (isKey(buf, key, keyEnd, OBJECT)) {
        // A second object would be the one the parse keeps.
        if (object !== undefined || !modified || buf[v] !== LBRACE) return -1;
        object = this.#object(buf, end, v, strip, probing);
        return object === undefined ? -1 : object.end;
      }
      if (!isKey(buf, key, keyEnd, TYPE)) return valueEnd(buf, v, end);
      if (buf[v] !== QUOTE) return -1;
      const close = stringEnd(buf, v, end);
      modified = close > 0 && isKey(buf, v, close, MODIFIED);
      return close;
    });
    if (closed < 0) return undefined;
    if (object === undefined || !modified) return undefined;
    this.#idle = object.keys.length === 0 ? this.#idle + 1 : 0;
    // Nothing to take nor cut: the line is parsed as it came, without walking it again for managedFields.
    if (object.edits.length === 0) return NOTHING;
    return { text: textWithout(buf, start, end, object.edits, object.fills) as string, keys: object.keys, parts: object.parts };
  }

  /** The walk of the event's object, whose `{` is at `o`; `probing`: after a rest, every member is compared. */
  #object(buf: Buffer, end: number, o: number, strip: boolean, probing: boolean): ObjectParts | undefined {
    // The edits as from/to pairs, each a cut or a placeholder.
    const edits: number[] = [];
    const fills: (Buffer | undefined)[] = [];
    const keys: string[] = [];
    const parts: unknown[] = [];
    let prior: Record<string, unknown> | undefined;
    let metadata = false;
    this.#events++;
    const closed = members(buf, o, end, (key, keyEnd, v) => {
      if (isKey(buf, key, keyEnd, METADATA)) {
        if (metadata || buf[v] !== LBRACE) return -1;
        const meta = metadataOf(buf, v, end);
        if (meta === undefined) return -1;
        metadata = true;
        if (strip && meta.managedFields >= 0) {
          const span = memberSpan(buf, v, end, meta.managedFields, meta.managedFieldsEnd);
          if (span !== undefined) {
            edits.push(span[0], span[1]);
            fills.push(undefined);
          }
        }
        const found = meta.name === undefined ? undefined : this.#lookUp(meta.namespace, meta.name);
        if (typeof found !== 'object' || found === null || !Object.isFrozen(found)) return -1;
        prior = found as Record<string, unknown>;
        return meta.end;
      }
      if (prior === undefined || (buf[v] !== LBRACE && buf[v] !== LBRACKET)) return valueEnd(buf, v, end);
      const name = buf.toString('latin1', key + 1, keyEnd - 1);
      const was = name !== '__proto__' && Object.hasOwn(prior, name) ? prior[name] : undefined;
      const comparable = typeof was === 'object' && was !== null;
      const compared = comparable && (probing || this.#worthComparing(name));
      const same = compared ? sameMember(buf, v, end, was) : -1;
      if (same >= 0) {
        edits.push(v, same);
        fills.push(PLACEHOLDER_JSON);
        keys.push(name);
        parts.push(was);
        this.#misses.delete(name);
        return same;
      }
      if (!compared) return containerEnd(buf, v, end);
      // Bounded: a server that names ever new members cannot grow it past a few hundred.
      if (this.#misses.size >= MAX_REMEMBERED && !this.#misses.has(name)) this.#misses.clear();
      this.#misses.set(name, (this.#misses.get(name) ?? 0) + 1);
      return memberEnd(buf, v, end);
    });
    if (closed < 0 || !metadata) return undefined;
    return { end: closed, edits, fills, keys, parts };
  }

  /** The consumer's cached object; a lookup that throws has found nothing, and the event is decoded as ever. */
  #lookUp(namespace: string | undefined, name: string): unknown {
    try {
      return this.#cached(namespace, name);
    } catch {
      return undefined;
    }
  }

  /** Whether to compare the member `name` this time: always, unless it has differed again and again. */
  #worthComparing(name: string): boolean {
    const misses = this.#misses.get(name);
    return misses === undefined || misses < MISSES_BEFORE_RESTING || this.#events % RETRY_EVERY === 0;
  }
}

/** What the walk of the event's object found: where it ends, the ranges to cut or fill with the placeholder, and the parts taken. */
interface ObjectParts {
  readonly end: number;
  readonly edits: readonly number[];
  readonly fills: readonly (Buffer | undefined)[];
  readonly keys: string[];
  readonly parts: unknown[];
}

/** What the walk of an object's metadata found: where it ends, its name and namespace, and its managedFields member. */
interface Metadata {
  readonly end: number;
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly managedFields: number;
  readonly managedFieldsEnd: number;
}

/** Walks the metadata whose `{` is at `m`; undefined when a key is not plain or one of the three is repeated. */
function metadataOf(buf: Buffer, m: number, end: number): Metadata | undefined {
  let name: string | undefined;
  let namespace: string | undefined;
  let managedFields = -1;
  let managedFieldsEnd = -1;
  const closed = members(buf, m, end, (key, keyEnd, v) => {
    const isName = isKey(buf, key, keyEnd, NAME);
    if (isName || isKey(buf, key, keyEnd, NAMESPACE)) {
      if ((isName ? name : namespace) !== undefined || buf[v] !== QUOTE) return -1;
      const after = plainStringEnd(buf, v, end);
      if (after < 0) return -1;
      const value = buf.toString('latin1', v + 1, after - 1);
      if (isName) name = value;
      else namespace = value;
      return after;
    }
    if (!isKey(buf, key, keyEnd, MANAGED_FIELDS)) return valueEnd(buf, v, end);
    // As the strip finds it (P-7): the key with its colon at once, an array for its value.
    if (managedFields >= 0) return -1;
    const after = valueEnd(buf, v, end);
    if (buf[keyEnd] === COLON && buf[v] === LBRACKET && after > 0 && buf[after - 1] === RBRACKET) {
      managedFields = key;
      managedFieldsEnd = after;
    }
    return after;
  });
  return closed < 0 ? undefined : { end: closed, name, namespace, managedFields, managedFieldsEnd };
}

/**
 * Walks the members of the object whose `{` is at `o`: `visit` is given each key's span (quotes included) and where
 * its value begins, and gives back where the value ends, or -1 to stop. Index just past the object's `}`; -1 when a
 * key is not plain (printable ASCII, no escape), the bytes are not a well-formed object there, or `visit` stopped.
 */
function members(buf: Buffer, o: number, end: number, visit: (key: number, keyEnd: number, v: number) => number): number {
  let i = skipSpace(buf, o + 1, end);
  if (buf[i] === RBRACE) return i + 1;
  for (;;) {
    const keyEnd = plainStringEnd(buf, i, end);
    const v = valueStart(buf, keyEnd, end);
    if (v < 0) return -1;
    const after = visit(i, keyEnd, v);
    if (after < 0) return -1;
    i = skipSpace(buf, after, end);
    if (buf[i] === RBRACE) return i + 1;
    if (buf[i] !== COMMA) return -1;
    i = skipSpace(buf, i + 1, end);
  }
}

/** Index just past the closing quote of the string at `q` when it is plain (printable ASCII, no escape); else -1. */
function plainStringEnd(buf: Buffer, q: number, end: number): number {
  if (buf[q] !== QUOTE) return -1;
  for (let i = q + 1; i < end; i++) {
    const b = buf[i] as number;
    if (b === QUOTE) return i + 1;
    if (b < 0x20 || b >= 0x7f || b === 0x5c) return -1;
  }
  return -1;
}

/** Where the value of the member whose key ends just before `keyEnd` begins, past its colon; -1 when no colon follows. */
function valueStart(buf: Buffer, keyEnd: number, end: number): number {
  if (keyEnd < 0) return -1;
  const colon = skipSpace(buf, keyEnd, end);
  return buf[colon] === COLON ? skipSpace(buf, colon + 1, end) : -1;
}

/** Index just past the value that begins at `v`; the bytes of a scalar run to the next comma, brace or bracket. */
function valueEnd(buf: Buffer, v: number, end: number): number {
  const b = buf[v];
  if (b === LBRACE || b === LBRACKET) return containerEnd(buf, v, end);
  if (b === QUOTE) return stringEnd(buf, v, end);
  let i = v;
  while (i < end) {
    const c = buf[i];
    if (c === COMMA || c === RBRACE || c === RBRACKET || isJsonSpace(c as number)) break;
    i++;
  }
  return i > v ? i : -1;
}

/** Whether the quoted key at `[q, close)` (quotes included) is `word`. */
function isKey(buf: Buffer, q: number, close: number, word: Buffer): boolean {
  return equalsBytes(buf, q + 1, close - 1, word);
}

