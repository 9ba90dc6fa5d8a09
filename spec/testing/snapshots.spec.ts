import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer, StatusError, type ApiServer } from '../../src/testing/index.js';
import { request } from './wire.js';

// A list at a resourceVersion is that version, whatever was written after it and whatever was read before.

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer();
});
afterEach(async () => {
  await server.close();
});

/** `name → resourceVersion` of a list's items. */
function versions(items: any[]): Record<string, string> {
  return Object.fromEntries(items.map((o) => [o.metadata.name, o.metadata.resourceVersion]));
}

async function listAt(path: string, rv: string, extra = ''): Promise<any> {
  const res = await request(`${server.url}${path}?resourceVersion=${rv}&resourceVersionMatch=Exact${extra}`);
  expect(res.status).toBe(200);
  expect(res.json.metadata.resourceVersion).toBe(rv);
  return res.json;
}

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, team = 'x'): object => ({ metadata: { name, namespace: 'default', labels: { team } } });

describe('a list at a past resourceVersion', () => {
  /** Writes a, b and c, then one write more so their resourceVersion is in the past, and lists it once (the read that keeps a view). */
  async function pastPoint(): Promise<{ rv: string; before: Record<string, string> }> {
    for (const n of ['a', 'b', 'c']) await server.create('v1/configmaps', cm(n));
    const rv = server.resourceVersion();
    const before = versions(server.list('v1/configmaps'));
    await server.create('v1/configmaps', cm('later'));
    expect(versions((await listAt(CM, rv)).items)).toEqual(before);
    return { rv, before };
  }

  it('still holds an object deleted after it', async () => {
    const { rv, before } = await pastPoint();
    await server.delete('v1/configmaps', 'default', 'b');
    expect(versions((await listAt(CM, rv)).items)).toEqual(before);
  });

  it('shows an object updated after it at its version then', async () => {
    const { rv, before } = await pastPoint();
    await server.patch('v1/configmaps', 'default', 'a', { data: { k: 'v' } });
    const items = (await listAt(CM, rv)).items;
    expect(versions(items)).toEqual(before);
    expect(items.find((o: any) => o.metadata.name === 'a').data).toBeUndefined();
  });

  it('answers a field selector from the objects of then', async () => {
    const { rv, before } = await pastPoint();
    await server.delete('v1/configmaps', 'default', 'b');
    expect(versions((await listAt(CM, rv, '&fieldSelector=metadata.name%3Db')).items)).toEqual({ b: before['b'] });
  });

  it('does not show an object created after it', async () => {
    const { rv, before } = await pastPoint();
    await server.create('v1/configmaps', cm('d'));
    expect(versions((await listAt(CM, rv)).items)).toEqual(before);
  });

  it('pages through the version of its first page, with a selector, whatever is written between pages', async () => {
    const { rv, before } = await pastPoint();
    const first = await listAt(CM, rv, '&limit=1&labelSelector=team%3Dx');
    expect(versions(first.items)).toEqual({ a: before['a'] });
    await server.delete('v1/configmaps', 'default', 'b');
    await server.patch('v1/configmaps', 'default', 'c', { metadata: { labels: { team: 'y' } } });
    const rest = await request(`${server.url}${CM}?limit=5&labelSelector=team%3Dx&continue=${encodeURIComponent(first.metadata.continue)}`);
    expect(rest.status).toBe(200);
    expect(rest.json.metadata.resourceVersion).toBe(rv);
    expect(versions(rest.json.items)).toEqual({ b: before['b'], c: before['c'] });
  });
});

// Kinds of every shape the simulator serves: namespaced and cluster-scoped, built-in and registered.
const KINDS = [
  { resource: 'v1/configmaps', path: '/api/v1/configmaps', namespaced: true },
  { resource: 'v1/nodes', path: '/api/v1/nodes', namespaced: false },
  { resource: 'example.com/v1/widgets', path: '/apis/example.com/v1/widgets', namespaced: true },
] as const;

type Step =
  | { op: 'create' | 'relabel'; kind: number; ns: string; name: string; team: string }
  | { op: 'delete'; kind: number; ns: string; name: string }
  | { op: 'list'; kind: number; point: number; limit: number; selected: boolean };

const kind = fc.integer({ min: 0, max: KINDS.length - 1 });
const ns = fc.constantFrom('a', 'b');
const name = fc.constantFrom('p', 'q', 'r', 's');
const team = fc.constantFrom('x', 'y');
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), kind, ns, name, team }),
  fc.record({ op: fc.constant('relabel' as const), kind, ns, name, team }),
  fc.record({ op: fc.constant('delete' as const), kind, ns, name }),
  fc.record({ op: fc.constant('list' as const), kind, point: fc.nat(), limit: fc.integer({ min: 0, max: 3 }), selected: fc.boolean() }),
);

/** The replayed state: per kind, `key → "resourceVersion team"`. */
type State = Map<string, string>[];

const keyOf = (k: number, ns: string, name: string): string => (KINDS[k]!.namespaced ? `${ns}/${name}` : name);

function stateOfItems(k: number, items: any[]): Map<string, string> {
  return new Map(items.map((o) => [keyOf(k, o.metadata.namespace, o.metadata.name), `${o.metadata.resourceVersion} ${o.metadata.labels?.team}`]));
}

/** Applies a write to the server and the replayed state alike; a refused write (409, 404) changes neither. */
async function write(state: State, s: Exclude<Step, { op: 'list' }>): Promise<void> {
  const { resource, namespaced } = KINDS[s.kind]!;
  const namespace = namespaced ? s.ns : undefined;
  const table = state[s.kind]!;
  const key = keyOf(s.kind, s.ns, s.name);
  try {
    if (s.op === 'create') {
      const o: any = await server.create(resource, { metadata: { name: s.name, namespace, labels: { team: s.team } } });
      table.set(key, `${o.metadata.resourceVersion} ${s.team}`);
    } else if (s.op === 'relabel') {
      const o: any = await server.patch(resource, namespace, s.name, { metadata: { labels: { team: s.team } } });
      table.set(key, `${o.metadata.resourceVersion} ${s.team}`);
    } else {
      await server.delete(resource, namespace, s.name);
      table.delete(key);
    }
  } catch (err) {
    if (!(err instanceof StatusError)) throw err;
  }
}

/** Lists a kind at `rv` exactly, paged by `limit` (0: one page), every page at `rv`. */
async function pagedAt(k: number, rv: string, limit: number, selected: boolean): Promise<Map<string, string>> {
  const selector = selected ? '&labelSelector=team%3Dx' : '';
  const items: any[] = [];
  let cont = '';
  do {
    const q = cont === '' ? `resourceVersion=${rv}&resourceVersionMatch=Exact&limit=${limit}` : `limit=${limit}&continue=${encodeURIComponent(cont)}`;
    const res = await request(`${server.url}${KINDS[k]!.path}?${q}${selector}`);
    expect(res.status).toBe(200);
    expect(res.json.metadata.resourceVersion).toBe(rv);
    items.push(...res.json.items);
    cont = res.json.metadata.continue ?? '';
  } while (cont !== '');
  return stateOfItems(k, items);
}

const selectedOf = (m: Map<string, string>): Map<string, string> => new Map([...m].filter(([, v]) => v.endsWith(' x')));

describe('past lists (property)', () => {
  it('for any writes and reads, a list at every past resourceVersion equals the state replayed to it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        // A server of its own per run, so a failing run replays alone while shrinking.
        await server.close();
        server = await startApiServer();
        server.registerResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget' });
        // Every resourceVersion reached, with the state replayed to it.
        const points: { rv: string; state: State }[] = [{ rv: server.resourceVersion(), state: KINDS.map(() => new Map()) }];
        for (const s of steps) {
          if (s.op === 'list') {
            const p = points[s.point % points.length]!;
            const want = p.state[s.kind]!;
            expect(await pagedAt(s.kind, p.rv, s.limit, s.selected)).toEqual(s.selected ? selectedOf(want) : want);
            continue;
          }
          const last = points[points.length - 1]!;
          const state = last.state.map((m) => new Map(m));
          await write(state, s);
          if (server.resourceVersion() !== last.rv) points.push({ rv: server.resourceVersion(), state });
        }
        // Read every point, then delete every object, then read every point again: no later write may show.
        const checkAll = async (): Promise<void> => {
          for (const p of points) {
            for (const k of KINDS.keys()) expect(await pagedAt(k, p.rv, 2, false)).toEqual(p.state[k]);
          }
        };
        await checkAll();
        for (const { resource, namespaced } of KINDS) {
          for (const o of server.list<any>(resource)) await server.delete(resource, namespaced ? o.metadata.namespace : undefined, o.metadata.name);
        }
        await checkAll();
      }),
      { numRuns: 60 },
    );
  });
});
