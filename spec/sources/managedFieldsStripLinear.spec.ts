/**
 * The managedFields strip reads a line in time linear in its length, whatever the line holds: repeated `metadata`
 * keys (legal JSON) close an object on the path again and again, and each close may look ahead for the key. The
 * bytes its searches read are counted, so the spec does not depend on the machine's speed.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_METADATA, ITEM_METADATA, managedFieldsSpan, type MetadataPath } from '../../src/sources/managedFieldsStrip.js';

/** `text` as a buffer whose `indexOf` counts the bytes each search reads (from its offset to the hit or the end). */
function counted(text: string): { readonly buf: Buffer; scanned(): number } {
  const buf = Buffer.from(text);
  let scanned = 0;
  const native = Buffer.prototype.indexOf;
  Object.defineProperty(buf, 'indexOf', {
    value(this: Buffer, value: Buffer, from: number) {
      const at = native.call(this, value, from) as number;
      scanned += (at < 0 ? this.length : at) - from;
      return at;
    },
  });
  return { buf, scanned: () => scanned };
}

describe('managedFieldsSpan on a line of repeated metadata objects', () => {
  const n = 20_000;
  const cases: [string, string, MetadataPath][] = [
    ['a LIST item', `{${'"metadata":{},'.repeat(n)}"spec":{"managedFields":[]}}`, ITEM_METADATA],
    ['a watch event', `{"type":"ADDED","object":{${'"metadata":{},'.repeat(n)}"spec":{"managedFields":[]}}}`, EVENT_METADATA],
  ];
  for (const [name, text, path] of cases) {
    it(`${name}: its searches read the line about once, not once per closed metadata object`, () => {
      expect(() => JSON.parse(text)).not.toThrow();
      const { buf, scanned } = counted(text);
      // The key is in the spec, not the metadata: nothing to strip.
      expect(managedFieldsSpan(buf, 0, buf.length, path)).toBeUndefined();
      expect(scanned() / buf.length).toBeLessThan(2);
    });
  }
});
