import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startApiServer, StatusError, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';

type Op =
  | { kind: 'create' | 'relabel'; ns: string; name: string; team: string }
  | { kind: 'delete'; ns: string; name: string };

const ns = fc.constantFrom('a', 'b');
const name = fc.constantFrom('p', 'q', 'r', 's');
const team = fc.constantFrom('x', 'y');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), ns, name, team }),
  fc.record({ kind: fc.constant('relabel' as const), ns, name, team }),
  fc.record({ kind: fc.constant('delete' as const), ns, name }),
);

/** `ns/name → "rv team"`: what must match between the server and a recorded state. */
type State = Map<string, string>;

function stateOf(items: any[]): State {
  return new Map(items.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, `${o.metadata.resourceVersion} ${o.metadata.labels?.team}`]));
}

async function apply(server: ApiServer, o: Op): Promise<void> {
  try {
    if (o.kind === 'create') await server.create('v1/pods', { metadata: { name: o.name, namespace: o.ns, labels: { team: o.team } } });
    else if (o.kind === 'relabel') await server.patch('v1/pods', o.ns, o.name, { metadata: { labels: { team: o.team } } });
    else await server.delete('v1/pods', o.ns, o.name);
  } catch (err) {
    if (!(err instanceof StatusError)) throw err;
  }
}

async function pagedList(server: ApiServer, rv: string, limit: number): Promise<{ items: any[]; rv: string }> {
  const items: any[] = [];
  let cont = '';
  let listRv = '';
  do {
    const q = cont === '' ? `resourceVersion=${rv}&resourceVersionMatch=Exact&limit=${limit}` : `limit=${limit}&continue=${encodeURIComponent(cont)}`;
    const res = await request(`${server.url}/api/v1/pods?${q}`);
    expect(res.status).toBe(200);
    items.push(...res.json.items);
    listRv = res.json.metadata.resourceVersion;
    cont = res.json.metadata.continue ?? '';
  } while (cont !== '');
  return { items, rv: listRv };
}

describe('history consistency (property)', () => {
  it('every retained resourceVersion lists as it was, and a watch from it converges to the current state', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 4 }), fc.nat(), async (ops, limit, pick) => {
        const server = await startApiServer();
        try {
          const recorded: { rv: string; state: State }[] = [{ rv: server.resourceVersion(), state: new Map() }];
          for (const o of ops) {
            await apply(server, o);
            recorded.push({ rv: server.resourceVersion(), state: stateOf(server.list('v1/pods')) });
          }
          const point = recorded[pick % recorded.length]!;
          const listed = await pagedList(server, point.rv, limit);
          expect(listed.rv).toBe(point.rv);
          expect(stateOf(listed.items)).toEqual(point.state);

          // Replay a selector watch from the point onto the selector's view of the point's state.
          const view = new Map([...point.state].filter(([, v]) => v.endsWith(' x')));
          const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true&resourceVersion=${point.rv}&labelSelector=team%3Dx`);
          try {
            await server.create('v1/pods', { metadata: { name: 'sentinel', namespace: 'zz', labels: { team: 'x' } } });
            await w.waitForLines(1);
            await (async () => {
              for (;;) {
                if (w.events.some((e) => e.object.metadata.name === 'sentinel')) return;
                await w.waitForLines(w.lines.length + 1);
              }
            })();
          } finally {
            w.close();
          }
          for (const e of w.events) {
            const key = `${e.object.metadata.namespace}/${e.object.metadata.name}`;
            if (key === 'zz/sentinel') continue;
            if (e.type === 'DELETED') view.delete(key);
            else view.set(key, `${e.object.metadata.resourceVersion} ${e.object.metadata.labels?.team}`);
          }
          const now = new Map([...stateOf(server.list('v1/pods'))].filter(([k, v]) => v.endsWith(' x') && k !== 'zz/sentinel'));
          expect(view).toEqual(now);
        } finally {
          await server.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
