// The floor of the side-by-side benchmarks (bench/wireClient.ts): the least any
// client must do against the benchmark server. Paged LIST and watch with undici
// (what rxkube and client-node use) over kept-alive connections, each object
// JSON.parsed once and kept in a Map by key; "handlers" are plain calls.

import { StringDecoder } from 'node:string_decoder';
import { Agent, request } from 'undici';
import type { V1Pod } from '@kubernetes/client-node';

/** Where a LIST body's items begin, and what separates two of the benchmark server's pods (list items begin with their metadata, as kube-apiserver leaves a built-in's type out of them). */
const ITEMS = '"items":[';
const ITEM_SEPARATOR = ',{"metadata":{"name":"';

/** Called for each object the floor applies: `update` is false for a LIST item, true for a watch event. */
export type FloorHandler = (pod: V1Pod, update: boolean) => void;

/** The floor's cache and its lifecycle. */
export interface Floor {
  /** Resolves when the first LIST is in the cache. */
  readonly synced: Promise<void>;
  readonly cache: ReadonlyMap<string, V1Pod>;
  /** Relists after a watch ended with ERROR (410). */
  relisted(): number;
  stop(): Promise<void>;
}

const keyOf = (p: V1Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;

/** Lists and watches `url`'s pods, calling every handler for each object applied. */
export function floorClient(url: string, handlers: readonly FloorHandler[]): Floor {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const cache = new Map<string, V1Pod>();
  const ac = new AbortController();
  let relists = 0;
  const get = async (path: string): Promise<AsyncIterable<Buffer>> =>
    (await request(`${url}${path}`, { dispatcher: agent, signal: ac.signal, headersTimeout: 0, bodyTimeout: 0 })).body as AsyncIterable<Buffer>;
  const list = async (): Promise<string> => {
    let token = '';
    let rv = '';
    const next = new Map<string, V1Pod>();
    const item = (json: string): void => {
      const p = JSON.parse(json) as V1Pod;
      next.set(keyOf(p), p);
      for (const h of handlers) h(p, false);
    };
    do {
      const res = await get(`/api/v1/pods?limit=500${token ? `&continue=${token}` : ''}`);
      // Each object is cut out at the item boundary the benchmark server writes (every pod starts with the same
      // bytes) and JSON.parsed on its own, as a chunk completes it: no page-sized string or buffer, no scanner.
      const decoder = new StringDecoder('utf8');
      let text = '';
      let head: string | undefined;
      for await (const c of res) {
        text += decoder.write(c);
        if (head === undefined) {
          const at = text.indexOf(ITEMS);
          if (at < 0) continue;
          head = text.slice(0, at);
          text = text.slice(at + ITEMS.length);
        }
        let from = 0;
        for (let m = text.indexOf(ITEM_SEPARATOR, from); m !== -1; m = text.indexOf(ITEM_SEPARATOR, from)) {
          item(text.slice(from, m));
          from = m + 1;
        }
        text = text.slice(from);
      }
      text += decoder.end();
      // The last item, before the closing `]}`.
      if (text.length > 2) item(text.slice(0, text.lastIndexOf(']')));
      token = /"continue":"([^"]*)"/.exec(head ?? '')?.[1] ?? '';
      rv = /"resourceVersion":"([^"]*)"/.exec(head ?? '')?.[1] ?? '';
    } while (token !== '');
    cache.clear();
    for (const [k, v] of next) cache.set(k, v);
    return rv;
  };
  const watch = async (rv: string): Promise<'expired' | 'ended'> => {
    const res = await get(`/api/v1/pods?watch=true&resourceVersion=${rv}`);
    let rest = '';
    for await (const c of res) {
      const text = rest + c.toString('utf8');
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        const ev = JSON.parse(text.slice(start, nl)) as { type: string; object: V1Pod };
        start = nl + 1;
        if (ev.type === 'ERROR') return 'expired';
        cache.set(keyOf(ev.object), ev.object);
        for (const h of handlers) h(ev.object, true);
      }
      rest = text.slice(start);
    }
    return 'ended';
  };
  const synced = list();
  void (async () => {
    let rv = await synced;
    for (;;) {
      const how = await watch(rv);
      if (how === 'expired') {
        rv = await list();
        relists++;
      }
    }
  })().catch(() => undefined);
  return {
    synced: synced.then(() => undefined),
    cache,
    relisted: () => relists,
    stop: async () => {
      ac.abort();
      await agent.destroy().catch(() => undefined);
    },
  };
}
