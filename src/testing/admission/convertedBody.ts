import type { ResourceType } from '../storage/resources.js';
import type { Sink } from '../server/sink.js';
import { badRequest, StatusError } from '../server/status.js';
import { patchedObject } from '../writes/patch.js';
import { applyToLive, checkApplyConfiguration, type ApplyWriter } from '../writes/serverSideApply.js';
import { changedFields, setAt, valueAt } from '../writes/fieldSets.js';
import { readEntries, scopeOf } from '../writes/managedFields.js';
import { convertObjects, type ConversionWebhook } from './conversion.js';
import { isRecord } from '../writes/objectRules.js';
import { APPLY } from '../writes/objectHandlers.js';

// Responses of a version served through a conversion webhook: the objects of a body or of a watch, converted from
// the storage version to the version read, in order.

type AnyObject = Record<string, unknown>;

/** An object as stored: the apiVersion servedVersion.ts gave it for `type` put back to the storage version's. */
function asStored(w: ConversionWebhook, type: ResourceType, o: AnyObject): AnyObject {
  return o['apiVersion'] === type.apiVersion ? { ...o, apiVersion: w.storageApiVersion } : o;
}

/**
 * A response body (one object, or a list of them) with its objects
 * converted to `type`'s version by the webhook; other bodies (a Status)
 * unchanged. Rejects with kube-apiserver's 500 when the conversion fails.
 */
export async function convertedBody(w: ConversionWebhook, type: ResourceType, body: string): Promise<string> {
  const parsed = JSON.parse(body) as unknown;
  if (!isRecord(parsed)) return body;
  if (parsed['kind'] === type.kind) {
    const [one] = await convertObjects(w, [asStored(w, type, parsed)], type.apiVersion);
    return JSON.stringify(one);
  }
  if (parsed['kind'] === type.listKind && Array.isArray(parsed['items'])) {
    const items = await convertObjects(w, (parsed['items'] as unknown[]).filter(isRecord).map((o) => asStored(w, type, o)), type.apiVersion);
    return JSON.stringify({ ...parsed, items });
  }
  return body;
}

/**
 * Converts a request body in `type`'s version to the storage version before
 * it is written; a body that is not an object of that version is left for
 * the write to refuse.
 */
export async function bodyToStorage(w: ConversionWebhook, type: ResourceType, body: unknown): Promise<unknown> {
  if (!isRecord(body) || body['apiVersion'] !== type.apiVersion) return body;
  const [one] = await convertObjects(w, [body], w.storageApiVersion);
  return one;
}

/**
 * A watch response whose object events are converted one after another
 * before they are written, so their order is kept. A failed conversion
 * ends the watch with an ERROR event carrying the 500, as kube-apiserver
 * ends a watch it cannot convert.
 */
export class ConvertingSink implements Sink {
  // What goes to the client once converted.
  readonly #inner: Sink;
  readonly #webhook: ConversionWebhook;
  readonly #type: ResourceType;
  // Each line waits for the one before it.
  #chain: Promise<void> = Promise.resolve();
  // A line not yet complete.
  #partial = '';
  // After a failed conversion nothing more is written.
  #failed = false;

  constructor(inner: Sink, webhook: ConversionWebhook, type: ResourceType) {
    this.#inner = inner;
    this.#webhook = webhook;
    this.#type = type;
  }

  write(chunk: string | Buffer): void {
    const text = this.#partial + chunk.toString();
    const end = text.lastIndexOf('\n');
    this.#partial = text.slice(end + 1);
    if (end === -1) return;
    for (const line of text.slice(0, end).split('\n')) this.#then(() => this.#line(line));
  }

  end(): void {
    this.#then(() => this.#inner.end());
  }

  writeThenReset(chunk: string): void {
    this.#then(() => this.#inner.writeThenReset(chunk));
  }

  #then(step: () => void | Promise<void>): void {
    this.#chain = this.#chain.then(async () => {
      if (!this.#failed) await step();
    });
  }

  async #line(line: string): Promise<void> {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      // A malformed-line fault goes out as armed.
      this.#inner.write(`${line}\n`);
      return;
    }
    const object = isRecord(event) ? event['object'] : undefined;
    if (!isRecord(event) || event['type'] === 'BOOKMARK' || event['type'] === 'ERROR' || !isRecord(object) || object['kind'] !== this.#type.kind) {
      this.#inner.write(`${line}\n`);
      return;
    }
    try {
      const [converted] = await convertObjects(this.#webhook, [asStored(this.#webhook, this.#type, object)], this.#type.apiVersion);
      this.#inner.write(`${JSON.stringify({ ...event, object: converted })}\n`);
    } catch (err) {
      this.#failed = true;
      const status = err instanceof StatusError ? err.status : new StatusError(500, 'InternalError', 'Internal error occurred: conversion failed').status;
      this.#inner.write(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      this.#inner.end();
    }
  }
}

/** How a write through a converted version is performed: as which verb, on which resource, with which body. */
export interface ConvertedWrite {
  readonly verb: 'create' | 'update' | 'patch' | 'delete';
  readonly type: ResourceType;
  readonly read: () => Promise<unknown>;
}

/**
 * A write through a version converted by a webhook, turned into a write of
 * the storage version: a create or update body is converted first; a JSON
 * or merge patch is applied to the object converted to the version
 * requested and the result, converted back, is written as an update (as
 * kube-apiserver patches in the version requested); so is a server-side
 * apply (WH-146).
 */
export async function convertedWrite(
  w: ConversionWebhook & { readonly storageType: ResourceType },
  verb: ConvertedWrite['verb'],
  type: ResourceType,
  current: AnyObject | undefined,
  contentType: string,
  readBody: () => Promise<unknown>,
  applier: Applier,
): Promise<ConvertedWrite> {
  const storageType = w.storageType;
  if (verb !== 'patch') return { verb, type: storageType, read: async () => bodyToStorage(w, type, await readBody()) };
  if (contentType === APPLY) return appliedWrite(w, type, current, await readBody(), applier);
  if (current === undefined) return { verb, type: storageType, read: readBody };
  const patch = await readBody();
  const [inVersion] = await convertObjects(w, [asStored(w, type, current)], type.apiVersion);
  const next = patchedObject(inVersion, contentType, patch, (current['metadata'] as AnyObject)['resourceVersion']);
  if (next === undefined) return { verb, type: storageType, read: async () => patch };
  const [stored] = await convertObjects(w, [next], w.storageApiVersion);
  return { verb: 'update', type: storageType, read: async () => stored };
}

/** Who applies, and the object's name on the URL: asked only of a server-side apply (its fieldManager is checked then). */
export interface Applier {
  readonly name: string;
  writer(): ApplyWriter;
}

/**
 * A server-side apply through a converted version, in the version requested
 * as kube-apiserver applies it (WH-146): a configuration that creates is a
 * whole object, converted and applied as the storage version; otherwise the
 * stored object, converted to the version requested, takes the
 * configuration there, and the result, converted back, becomes an apply of
 * the storage version by the same manager — of the fields it changes and
 * those it owns already — so ownership and conflicts are decided where every
 * manager's fields are, in the storage version's field names.
 */
async function appliedWrite(w: ConversionWebhook & { readonly storageType: ResourceType }, type: ResourceType, current: AnyObject | undefined, config: unknown, applier: Applier): Promise<ConvertedWrite> {
  checkApplyConfiguration(type, config, applier.name);
  if (current === undefined) {
    const [created] = await convertObjects(w, [config], w.storageApiVersion);
    return { verb: 'patch', type: w.storageType, read: async () => created };
  }
  const writer = applier.writer();
  const [live] = await convertObjects(w, [asStored(w, type, current)], type.apiVersion);
  if (!isRecord(live)) throw badRequest('the converted object is not a JSON object');
  // Values only here: the conflicts are the storage version's apply's to find.
  const [after] = await convertObjects(w, [applyToLive(type, live, config, { ...writer, force: true })], w.storageApiVersion);
  if (!isRecord(after)) throw badRequest('the converted object is not a JSON object');
  return { verb: 'patch', type: w.storageType, read: async () => storageConfig(w.storageType, current, after, writer) };
}

/**
 * The storage version's apply configuration that takes `current` to `after`
 * for `writer`: the fields that change and those it owned already (one it
 * stopped sending is missing from `after`, so that apply removes it).
 */
function storageConfig(type: ResourceType, current: AnyObject, after: AnyObject, writer: ApplyWriter): AnyObject {
  const meta = current['metadata'] as AnyObject;
  const config: AnyObject = { apiVersion: type.apiVersion, kind: type.kind, metadata: { name: meta['name'], ...(meta['namespace'] === undefined ? {} : { namespace: meta['namespace'] }) } };
  const mine = readEntries(current).find((e) => e.manager === writer.manager && e.operation === 'Apply' && e.subresource === writer.subresource);
  for (const path of [...changedFields(current, after, scopeOf(type, writer.subresource)).values(), ...(mine?.fields.values() ?? [])]) {
    const value = valueAt(after, path);
    if (value !== undefined) setAt(config, path, structuredClone(value));
  }
  return config;
}
