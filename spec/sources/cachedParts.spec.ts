import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors/api/DecodeError.js';
import { type CachedLookup, CachedReader } from '../../src/sources/cachedParts.js';
import { decodeBytes } from '../../src/sources/watchLines.js';
import { deepFreeze } from '../../src/store/deepFreeze.js';

const redact = (text: string): string => text;

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    resourceVersion: '1',
    labels: { app: 'web' },
    managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
  },
  spec: { containers: [{ name: 'web', image: 'nginx:1.27', args: ['--port=80', 'a & b <c>'] }], nodeName: 'node-1' },
  status: { phase: 'Running', podIP: '10.0.0.7', conditions: [{ type: 'Ready', status: 'True' }] },
};

/** The object a store would hold for `object`: its managedFields cut, deeply frozen. */
function stored(object: typeof pod): Record<string, unknown> {
  const { managedFields: _cut, ...metadata } = object.metadata;
  return deepFreeze(structuredClone({ ...object, metadata })) as unknown as Record<string, unknown>;
}

function line(type: string, object: unknown): Buffer {
  return Buffer.from(JSON.stringify({ type, object }));
}

/** Decodes `buf` with and without the cache, checks both give the same event, and returns the cached decode's object. */
function decodeBoth(buf: Buffer, cached: CachedLookup, strip = true): Record<string, unknown> {
  const plain = decodeBytes<unknown>(buf, 0, buf.length, 0, strip, redact);
  const event = decodeBytes<unknown>(buf, 0, buf.length, 0, strip, redact, new CachedReader(cached));
  expect(JSON.stringify(event)).toBe(JSON.stringify(plain));
  return event.object as Record<string, unknown>;
}

describe("a MODIFIED event takes the cached object's unchanged members (PF-50)", () => {
  it('takes the spec and status a metadata-only update left as they were, and asks for the object by namespace and name', () => {
    const old = stored(pod);
    const asked: [string | undefined, string][] = [];
    const cached: CachedLookup = (namespace, name) => {
      asked.push([namespace, name]);
      return old;
    };
    const next = { ...pod, metadata: { ...pod.metadata, resourceVersion: '2' } };
    const object = decodeBoth(line('MODIFIED', next), cached);
    expect(asked).toEqual([['default', 'web-1']]);
    expect(object['spec']).toBe(old['spec']);
    expect(object['status']).toBe(old['status']);
    expect(object['metadata']).not.toBe(old['metadata']);
    expect(Object.keys(object)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect((object['metadata'] as Record<string, unknown>)['managedFields']).toBeUndefined();
  });

  it('parses a member that changed, and takes the rest', () => {
    const old = stored(pod);
    const next = { ...pod, metadata: { ...pod.metadata, resourceVersion: '2' }, status: { ...pod.status, phase: 'Succeeded' } };
    const object = decodeBoth(line('MODIFIED', next), () => old);
    expect(object['spec']).toBe(old['spec']);
    expect(object['status']).not.toBe(old['status']);
    expect(object['status']).toEqual(next.status);
  });

  it('keeps managedFields when not asked to strip, and still takes the unchanged members', () => {
    const old = stored(pod);
    const object = decodeBoth(line('MODIFIED', pod), () => old, false);
    expect(object['spec']).toBe(old['spec']);
    expect((object['metadata'] as Record<string, unknown>)['managedFields']).toEqual(pod.metadata.managedFields);
  });

  it('asks for a cluster-scoped object by its name alone', () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', resourceVersion: '1' }, spec: { podCIDR: '10.0.0.0/24' } };
    const old = deepFreeze(structuredClone(node));
    const asked: unknown[][] = [];
    const object = decodeBoth(line('MODIFIED', node), (namespace, name) => {
      asked.push([namespace, name]);
      return old;
    });
    expect(asked).toEqual([[undefined, 'node-1']]);
    expect(object['spec']).toBe(old.spec);
  });

  it('takes nothing, and asks nothing, for an event of another type or one whose type follows its object', () => {
    const old = stored(pod);
    let asked = 0;
    const cached: CachedLookup = () => {
      asked++;
      return old;
    };
    for (const type of ['ADDED', 'DELETED', 'BOOKMARK']) expect(decodeBoth(line(type, pod), cached)['spec']).not.toBe(old['spec']);
    const late = Buffer.from(`{"object":${JSON.stringify(pod)},"type":"MODIFIED"}`);
    expect(decodeBoth(late, cached)['spec']).not.toBe(old['spec']);
    expect(asked).toBe(0);
  });

  it('takes nothing from a cached object that is not frozen, that is missing, or from a lookup that throws', () => {
    const thawed = structuredClone(stored(pod));
    expect(decodeBoth(line('MODIFIED', pod), () => thawed)['spec']).not.toBe(thawed['spec']);
    expect(decodeBoth(line('MODIFIED', pod), () => undefined)['spec']).toEqual(pod.spec);
    const failing: CachedLookup = () => {
      throw new Error('the cache is gone');
    };
    expect(decodeBoth(line('MODIFIED', pod), failing)['spec']).toEqual(pod.spec);
  });

  it('compares a member that keeps differing only now and then, and takes it again once it stops', () => {
    const old = stored(pod);
    const reader = new CachedReader(() => old);
    const decode = (object: unknown): Record<string, unknown> => {
      const buf = line('MODIFIED', object);
      return decodeBytes<unknown>(buf, 0, buf.length, 0, true, redact, reader).object as Record<string, unknown>;
    };
    // Four updates in a row whose spec differs: the fifth, whose spec is the cached one's, is not compared.
    for (let n = 0; n < 4; n++) expect(decode({ ...pod, spec: { ...pod.spec, nodeName: `node-${n + 2}` } })['spec']).toEqual({ ...pod.spec, nodeName: `node-${n + 2}` });
    const rested = decode(pod);
    expect(rested['spec']).not.toBe(old['spec']);
    expect(rested['spec']).toEqual(old['spec']);
    expect(rested['status']).toBe(old['status']);
    // Once in sixteen events it is compared again; found equal, it is compared every time after.
    const taken = Array.from({ length: 16 }, () => decode(pod)['spec'] === old['spec']);
    expect(taken.filter(Boolean).length).toBeGreaterThan(0);
    expect(taken.slice(taken.indexOf(true))).toEqual(Array(16 - taken.indexOf(true)).fill(true));
  });

  it('after four events in a row with nothing to take, reads one in sixteen this way until one has something again', () => {
    const old = stored(pod);
    let asked = 0;
    const reader = new CachedReader(() => {
      asked++;
      return old;
    });
    const decode = (object: unknown): Record<string, unknown> => {
      const buf = line('MODIFIED', object);
      return decodeBytes<unknown>(buf, 0, buf.length, 0, true, redact, reader).object as Record<string, unknown>;
    };
    const changed = (n: number): unknown => ({ ...pod, spec: { ...pod.spec, nodeName: `other-${n}` }, status: { ...pod.status, podIP: `10.0.1.${n}` } });
    for (let n = 0; n < 4; n++) decode(changed(n));
    expect(asked).toBe(4);
    // Sixteen more such events: one of them is read against the cache, the rest are decoded as ever.
    for (let n = 4; n < 20; n++) expect(decode(changed(n))['status']).toEqual((changed(n) as typeof pod).status);
    expect(asked).toBe(5);
    // An unchanged object, once read, is taken again, and every event after it is read.
    const taken = Array.from({ length: 17 }, () => decode(pod)['spec'] === old['spec']);
    const first = taken.indexOf(true);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(taken.slice(first).every(Boolean)).toBe(true);
  });

  it('takes nothing where a repeated or escaped key would make the parse keep another value', () => {
    const old = stored(pod);
    const body = JSON.stringify(pod).slice(1, -1);
    const spec = JSON.stringify(pod.spec);
    const other = JSON.stringify({ nodeName: 'elsewhere' });
    const lines = [
      // The last of two specs is the one JSON.parse keeps.
      `{"type":"MODIFIED","object":{${body},"spec":${other}}}`,
      `{"type":"MODIFIED","object":{${body},"spe\\u0063":${other}}}`,
      // The second object is the event's.
      `{"type":"MODIFIED","object":{${body}},"object":{${body},"spec":${other}}}`,
      // A repeated name or namespace could name another object.
      `{"type":"MODIFIED","object":{"metadata":{"name":"web-1","namespace":"default","name":"web-2"},"spec":${spec}}}`,
      `{"type":"MODIFIED","object":{"metadata":{"na\\u006de":"web-1","namespace":"default"},"spec":${spec}}}`,
      // A later duplicate written as the placeholder's text, were it known, is no placeholder of this process's.
      `{"type":"MODIFIED","object":{${body},"spec":"\\u0000${'0'.repeat(32)}"}}`,
    ];
    for (const text of lines) {
      const object = decodeBoth(Buffer.from(text), () => old);
      expect(object['spec'], text).not.toBe(old['spec']);
    }
  });

  it('never takes a member named __proto__, which an assignment would turn into the prototype', () => {
    const object = `{"metadata":{"name":"web-1","namespace":"default"},"__proto__":${JSON.stringify(pod.spec)}}`;
    const old = deepFreeze(JSON.parse(object) as Record<string, unknown>);
    expect(Object.hasOwn(old, '__proto__')).toBe(true);
    const decoded = decodeBoth(Buffer.from(`{"type":"MODIFIED","object":${object}}`), () => old);
    expect(Object.hasOwn(decoded, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
  });

  it('reports a line the shortened text would hide as the bytes the server sent', () => {
    const old = stored(pod);
    const bad = Buffer.from(`${line('MODIFIED', pod).toString()} trailing`);
    const thrown = (cached?: CachedLookup): unknown => {
      try {
        decodeBytes(bad, 0, bad.length, 7, true, redact, cached === undefined ? undefined : new CachedReader(cached));
      } catch (err) {
        return err;
      }
      return undefined;
    };
    const plain = thrown();
    const cachedError = thrown(() => old);
    expect(cachedError).toBeInstanceOf(DecodeError);
    expect((cachedError as Error).message).toBe((plain as Error).message);
  });

  it('decodes any line changed at random as the plain decode does', () => {
    const old = stored(pod);
    const sample = line('MODIFIED', { ...pod, metadata: { ...pod.metadata, resourceVersion: '2' } });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(sample.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), (changes) => {
        const changed = Buffer.from(sample);
        for (const [at, byte] of changes) changed[at] = byte;
        const outcome = (cached?: CachedLookup): string => {
          try {
            return JSON.stringify(decodeBytes(changed, 0, changed.length, 0, true, redact, cached === undefined ? undefined : new CachedReader(cached)));
          } catch (err) {
            return `${(err as Error).name}: ${(err as Error).message}`;
          }
        };
        expect(outcome(() => old)).toBe(outcome());
      }),
      { numRuns: 3000, seed: 52 },
    );
  });
});
