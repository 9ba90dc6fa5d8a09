import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { combineLatest, filter, firstValueFrom, from, map, merge, Subscription, take, toArray } from 'rxjs';
import { from as asyncFrom } from 'ix/asynciterable';
import { informer } from '../../src/informer/informer.js';
import { CacheSyncError } from '../../src/informer/CacheSyncError.js';
import { InformerFactory } from '../../src/informer/InformerFactory.js';
import type { InformerEvent } from '../../src/operators/informerEvent.js';
import { unwrapTombstone } from '../../src/store/DeletedFinalStateUnknown.js';
import { byLabel } from '../../src/store/indexFuncs.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import type { ListerWatcher } from '../../src/sources/types.js';
import { isNotFound, KubeApiError } from '../../src/errors/api/index.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import type { KubeObject } from '../../src/store/types.js';
import { pod } from '../helpers/objects.js';
import { deferred, waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const fast = { reflector: { backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } } };

let server: ApiServer;
const lifetimes = new Lifetimes();

function pods(opts: { namespace?: string } = {}) {
  return lifetimes.track(informer(kubeSource(server.kubeConfig(), 'v1/pods', opts), fast));
}

/** The name of what an event is about, a tombstone's included. */
const nameOf = (e: InformerEvent<KubeObject>): string | undefined => unwrapTombstone(e.obj)?.metadata?.name;

/** No watch and no connection left on the server: every socket the informer opened is closed. */
async function noSocketsLeft(): Promise<void> {
  await waitFor(() => server.stats.watchesOpen === 0 && server.stats.connections === 0, 'every watch and connection to close');
}

beforeEach(async () => {
  server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
});

afterEach(async () => {
  setErrorReporter(undefined);
  await lifetimes.end();
  await server.close();
});

describe('an informer is an Observable whose subscription is its lifetime', () => {
  it('starts on the first subscriber and stops, releasing every socket, on the last unsubscribe', async () => {
    await server.create('v1/pods', pod('a'));
    const inf = pods();
    expect(server.stats.requests).toBe(0);
    const seen: InformerEvent<unknown>[] = [];
    const sub = inf.subscribe((e) => seen.push(e));
    await inf.whenSynced({ timeout: 10_000 });
    expect(seen).toMatchObject([{ type: 'add', isInInitialList: true }]);
    await waitFor(() => server.stats.watchesOpen === 1, 'the watch to open');
    sub.unsubscribe();
    await noSocketsLeft();
    expect(inf.status().synced).toBe(false);
    expect(inf.store.size).toBe(0); // an idle informer holds no cache
    await expect(inf.whenSynced()).rejects.toMatchObject({ name: 'CacheSyncError', reason: 'not-running' });
  });

  it('firstValueFrom(informer.pipe(filter(...))) resolves on a live event and leaves nothing running', async () => {
    const inf = pods();
    const found = firstValueFrom(inf.pipe(filter((e) => e.type === 'add' && nameOf(e) === 'wanted')));
    await waitFor(() => server.stats.watchesOpen === 1, 'the watch to open');
    await server.create('v1/pods', pod('other'));
    await server.create('v1/pods', pod('wanted'));
    const event = await found;
    expect(nameOf(event)).toBe('wanted');
    await noSocketsLeft();
    expect(inf.store.size).toBe(0);
  });

  it('nothing more is applied once the last subscriber left from inside a delivery', async () => {
    // A list naming one key twice gives one Deltas with two deltas: the first delivery ends the lifetime.
    const twice = (rv: string): KubeObject => ({ metadata: { name: 'dup', namespace: 'default', uid: 'u1', resourceVersion: rv } });
    const source: ListerWatcher<KubeObject> = {
      list: async () => ({ metadata: { resourceVersion: '2' }, items: [twice('1'), twice('2')] }),
      watch: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<never>>(() => {}) }) }),
    };
    const inf = lifetimes.track(informer(source, { onError: () => {} }));
    const first = await firstValueFrom(inf);
    expect(first).toMatchObject({ type: 'add', obj: { metadata: { resourceVersion: '1' } } });
    await new Promise((r) => setImmediate(r));
    expect(inf.store.size).toBe(0);
    expect(inf.status().synced).toBe(false);
  });

  it('gives a later subscriber the cached objects as initial adds, then live events, with no duplicate', async () => {
    for (const n of ['a', 'b', 'c']) await server.create('v1/pods', pod(n));
    const inf = pods();
    const first = inf.subscribe();
    await inf.whenSynced();
    const late: string[] = [];
    const sub = inf.subscribe((e) => late.push(`${e.type}:${nameOf(e)}:${e.type === 'add' ? e.isInInitialList : ''}`));
    expect(late.sort()).toEqual(['add:a:true', 'add:b:true', 'add:c:true']);
    await server.create('v1/pods', pod('d'));
    await waitFor(() => late.includes('add:d:false'), 'the live add');
    expect(late).toHaveLength(4);
    sub.unsubscribe();
    first.unsubscribe();
    await noSocketsLeft();
  });

  it('a subscriber that joins inside another subscriber\'s callback gets each object once', async () => {
    const inf = pods();
    const inner: string[] = [];
    let joined = false;
    const outer = inf.subscribe((e) => {
      if (joined || nameOf(e) !== 'x') return;
      joined = true;
      inf.subscribe((i) => inner.push(`${i.type}:${nameOf(i)}`));
    });
    await inf.whenSynced();
    await server.create('v1/pods', pod('x'));
    await waitFor(() => inner.length > 0, 'the inner subscriber');
    await server.create('v1/pods', pod('y'));
    await waitFor(() => inner.includes('add:y'), 'the next add');
    expect(inner).toEqual(['add:x', 'add:y']);
    outer.unsubscribe();
  });

  it('works with merge, combineLatest and from like any Observable', async () => {
    await server.create('v1/pods', pod('p', { namespace: 'a' }));
    await server.create('v1/pods', pod('q', { namespace: 'b' }));
    const inA = pods({ namespace: 'a' });
    const inB = pods({ namespace: 'b' });
    const merged = await firstValueFrom(merge(inA, inB).pipe(map((e) => nameOf(e)), take(2), toArray()));
    expect(merged.sort()).toEqual(['p', 'q']);
    const pair = await firstValueFrom(combineLatest([inA, inB]).pipe(map(([x, y]) => [nameOf(x), nameOf(y)])));
    expect(pair).toEqual(['p', 'q']);
    const viaFrom = await firstValueFrom(from(asyncFrom(inA)));
    expect(nameOf(viaFrom)).toBe('p');
    await noSocketsLeft();
  });

  it('a handler registration holds the same lifetime as a subscription, and goes into a Subscription like one (LT-82)', async () => {
    const inf = pods();
    const reg = inf.addHandler({});
    await inf.whenSynced();
    const sub = inf.subscribe();
    reg.unsubscribe();
    await reg.done;
    expect(inf.status().synced).toBe(true); // the subscriber still holds it
    sub.unsubscribe();
    await noSocketsLeft();
    expect(inf.status()).toMatchObject({ state: 'idle', synced: false, objects: 0 });
    // A registration is an rxjs teardown: a Subscription that ends, ends it.
    const parent = new Subscription();
    const held = inf.addHandler({});
    parent.add(held);
    await inf.whenSynced();
    parent.unsubscribe();
    expect(held.closed).toBe(true);
    await noSocketsLeft();
    // After going idle, the next subscriber starts a new lifetime.
    const again = inf.subscribe();
    await inf.whenSynced();
    again.unsubscribe();
  });

  it('the factory hands out one shared informer, and later users add their indexes to it', async () => {
    await server.create('v1/pods', pod('w', { labels: { app: 'web' } }));
    const factory = new InformerFactory(server.kubeConfig());
    const a = factory.informerFor('v1/pods');
    const sub = a.subscribe();
    await a.whenSynced();
    const b = factory.informerFor('v1/pods', { indexers: { app: byLabel('app') } });
    expect(b).toBe(a);
    expect(a.store.byIndex('app', 'web').map((p) => p.metadata?.name)).toEqual(['w']);
    expect(a.store.byIndex('namespace', 'default')).toHaveLength(1); // the namespace index is always there
    expect(() => factory.informerFor('v1/pods', { indexers: { app: byLabel('other') } })).toThrow(/app/);
    sub.unsubscribe();
    await noSocketsLeft();
  });
});

describe('errors are never silent', () => {
  it('whenSynced({ timeout }) rejects with the last error as cause', async () => {
    const inf = lifetimes.track(informer(kubeSource(server.kubeConfig(), 'example.com/v1/nothings'), fast));
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    inf.subscribe();
    // Nobody subscribed to errors$: the default reporter hears of the 404. The wait starts after it, so the timeout
    // cannot pass before the first list was answered.
    await waitFor(() => reported.some((e) => isNotFound(e)), 'the 404 to be reported');
    const err = await inf.whenSynced({ timeout: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CacheSyncError);
    expect((err as CacheSyncError).reason).toBe('timeout');
    expect(isNotFound((err as Error).cause)).toBe(true);
    // The 404 of a resource the server does not serve says so (CR-130).
    expect((err as Error).message).toMatch(
      /example\.com\/v1\/nothings did not sync \(not within 300 ms\); last error: ResourceNotServedError: .*404 NotFound: the API server serves no group example\.com\/v1: is the CRD installed\?/,
    );
  });

  it('with a subscriber on errors$ (or an onError option) the default reporter stays quiet', async () => {
    const reported: Error[] = [];
    setErrorReporter((err) => reported.push(err));
    const heard: Error[] = [];
    const inf = lifetimes.track(informer(kubeSource(server.kubeConfig(), 'example.com/v1/nothings'), fast));
    inf.errors$.subscribe((e) => heard.push(e));
    const redirected: Error[] = [];
    const other = lifetimes.track(informer(kubeSource(server.kubeConfig(), 'example.com/v1/others'), { ...fast, onError: (e) => redirected.push(e) }));
    inf.subscribe();
    other.subscribe();
    await waitFor(() => heard.length >= 2 && redirected.length >= 2, 'errors on both channels');
    expect(reported).toEqual([]);
  });

  it('whenSynced takes an AbortSignal and names a misuse', async () => {
    const inf = lifetimes.track(informer(kubeSource(server.kubeConfig(), 'example.com/v1/nothings'), { ...fast, onError: () => {} }));
    inf.subscribe();
    const ac = new AbortController();
    const waiting = inf.whenSynced({ signal: ac.signal });
    ac.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'CacheSyncError', reason: 'aborted' });
    expect(() => inf.whenSynced(ac.signal as never)).toThrow(/pass \{ signal \}/);
    expect(() => inf.whenSynced({ timeout: -1 })).toThrow(/timeout/);
  });

  it('a field selector the server rejects (400) ends the informer and every subscriber with that error', async () => {
    const inf = lifetimes.track(informer(kubeSource(server.kubeConfig(), 'v1/pods', { fieldSelector: 'spec.noSuchField=x' }), { ...fast, onError: () => {} }));
    const ended = firstValueFrom(inf).catch((e: unknown) => e);
    const synced = inf.whenSynced({ timeout: 10_000 }).catch((e: unknown) => e);
    const reg = inf.addHandler({});
    const err = await ended;
    await reg.done; // the failure ends every registration (S-35)
    expect(reg.closed).toBe(true);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ status: 400, serverMessage: expect.stringContaining('field label not supported: spec.noSuchField') });
    expect(await synced).toMatchObject({ name: 'CacheSyncError', reason: 'failed', cause: err });
    let late: unknown;
    inf.subscribe({ error: (e: unknown) => (late = e) });
    expect(late).toBe(err);
    expect(() => inf.addHandler({})).toThrow(err as Error); // a registration is a subscriber: it gets the same error
    expect(inf.status().state).toBe('failed');
    await noSocketsLeft();
  });

  it('mistakes that need no server are named at construction', () => {
    const kc = server.kubeConfig();
    expect(() => kubeSource(kc, 'v1/pods', { labelSelector: 'app===' })).toThrow(/label selector/i);
    expect(() => kubeSource(kc, 'v1/pods', { fieldSelector: 'spec.nodeName==a==b' })).toThrow(/field selector/i);
    expect(() => kubeSource(kc, 'v1/nodes', { namespace: 'default' })).toThrow(/cluster-scoped/);
    const bad = server.kubeConfig();
    bad.clusters[0] = { ...bad.clusters[0]!, server: 'not a url' };
    expect(() => kubeSource(bad, 'v1/pods')).toThrow(/not a URL/);
    bad.clusters[0] = { ...bad.clusters[0]!, server: 'ftp://127.0.0.1:1' };
    expect(() => kubeSource(bad, 'v1/pods')).toThrow(/https: or http:/);
    expect(() => informer(kubeSource(kc, 'v1/pods'), { reflector: { pageSize: -1 } })).toThrow(/pageSize/);
  });
});

describe('handlers', () => {
  it('done resolves only after unsubscribe() and the handler call in progress has finished (client-go ShutDownEventHandler)', async () => {
    await server.create('v1/pods', pod('slow'));
    const inf = pods();
    const holding = deferred();
    const entered = deferred();
    let finished = false;
    const reg = inf.addHandler({
      add: async () => {
        entered.resolve();
        await holding.promise;
        finished = true;
      },
    });
    await entered.promise;
    let removed = false;
    reg.unsubscribe();
    const removal = reg.done.then(() => (removed = true));
    await new Promise((r) => setImmediate(r));
    expect(removed).toBe(false);
    holding.resolve();
    await removal;
    expect(finished).toBe(true);
  });
});
