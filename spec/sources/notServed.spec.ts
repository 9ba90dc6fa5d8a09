import type { IncomingMessage, ServerResponse } from 'node:http';
import { firstValueFrom, filter } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { informer, isNotFound, KubeApiError, kubeSource, ResourceNotServedError, type Informer, type KubeObject } from '../../src/index.js';
import { distance, suggest, type ServedResource } from '../../src/sources/notServed.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { startHostileServer, type HostileServer } from '../helpers/hostileServer.js';
import { waitFor } from '../helpers/waitFor.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const FAST = { reflector: { backoff: { initialMs: 5, maxMs: 20, jitter: 0 } } };
const WEBSITES = { group: 'example.com', version: 'v1', plural: 'websites', kind: 'Website', namespaced: true } as const;

describe('a list of a resource the server does not serve says why (CR-130, CR-131)', () => {
  let server: ApiServer;
  const running = new Lifetimes();
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    await running.end();
    await server.close();
  });

  const watch = (resource: string, opts: { initialList?: 'stream' } = {}): { inf: Informer<KubeObject>; errors: Error[] } => {
    const inf = running.track(informer(kubeSource(server.kubeConfig(), resource as 'example.com/v1/websites'), { ...FAST, ...opts }));
    const errors: Error[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.subscribe();
    return { inf, errors };
  };

  it('a group/version the server does not serve: errors$, status$, then the informer syncs once the CRD arrives', async () => {
    const { inf, errors } = watch('example.com/v1/websites');
    await waitFor(() => errors.length >= 3, 'three failed lists');
    const err = errors[0] as ResourceNotServedError;
    expect(err).toBeInstanceOf(ResourceNotServedError);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(isNotFound(err)).toBe(true);
    expect(err.message).toBe('list example.com/v1/websites: 404 NotFound: the API server serves no group example.com/v1: is the CRD installed?');
    expect(err).toMatchObject({ name: 'ResourceNotServedError', groupVersion: 'example.com/v1', resource: 'websites', groupVersionServed: false, suggestions: [] });
    expect(errors.every((e) => e instanceof ResourceNotServedError)).toBe(true);
    // The status stream says the same while it backs off.
    const backingOff = await firstValueFrom(inf.status$.pipe(filter((s) => s.reflector?.state === 'backoff')));
    expect(backingOff.reflector?.state === 'backoff' && backingOff.reflector.error).toBeInstanceOf(ResourceNotServedError);
    expect(inf.status().synced).toBe(false);

    server.registerResource(WEBSITES);
    await inf.whenSynced({ timeout: 10_000 });
    await server.create('example.com/v1/websites', { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog', namespace: 'default' } });
    await waitFor(() => inf.store.getByKey('default/blog'), 'the new object in the cache');
  });

  it('a resource name the group/version does not serve: the served plural it may mean', async () => {
    server.registerResource(WEBSITES);
    server.registerResource({ group: 'example.com', version: 'v1', plural: 'webhooks', kind: 'Webhook' });
    const { errors } = watch('example.com/v1/website');
    await waitFor(() => errors.length > 0, 'a failed list');
    expect(errors[0]?.message).toBe('list example.com/v1/website: 404 NotFound: example.com/v1 serves no resource "website": did you mean "websites"? is the CRD installed?');
    expect(errors[0]).toMatchObject({ groupVersionServed: true, suggestions: ['websites'] });
  });

  it('by kind, and with no CRD hint for built-in groups; a streaming list is explained too', async () => {
    const { errors } = watch('v1/Pod', { initialList: 'stream' });
    await waitFor(() => errors.length > 0, 'a failed list');
    expect(errors[0]?.message).toBe('watch v1/Pod: 404 NotFound: v1 serves no resource "Pod": did you mean "pods"?');
    const apps = watch('apps/v1/deploymentz');
    await waitFor(() => apps.errors.length > 0, 'a failed list');
    expect(apps.errors[0]?.message).toBe('list apps/v1/deploymentz: 404 NotFound: apps/v1 serves no resource "deploymentz": did you mean "deployments"?');
  });

  it('a 404 of a single object is not a resource that is not served', async () => {
    const source = kubeSource(server.kubeConfig(), 'v1/configmaps');
    await expect(source.list({}, new AbortController().signal)).resolves.toMatchObject({ items: [] });
  });
});

/** A server whose list always answers 404 and whose discovery answers what `discovery` says, counting both. */
async function notServing(discovery: (res: ServerResponse) => void): Promise<{ server: HostileServer; asked: { lists: number; discovery: number }; listOk: { on: boolean } }> {
  const asked = { lists: 0, discovery: 0 };
  const listOk = { on: false };
  const server = await startHostileServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/apis/example.com/v1') {
      asked.discovery++;
      discovery(res);
      return;
    }
    asked.lists++;
    res.setHeader('content-type', 'application/json');
    if (listOk.on) {
      res.end(JSON.stringify({ kind: 'WebsiteList', apiVersion: 'example.com/v1', metadata: { resourceVersion: '1' }, items: [] }));
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' }));
  });
  return { server, asked, listOk };
}

const json = (body: unknown) => (res: ServerResponse): void => {
  res.setHeader('content-type', 'application/json');
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

describe('discovery is asked once per failure streak, and its answer is hostile input (CR-132, CR-133)', () => {
  let hostile: HostileServer | undefined;
  afterEach(async () => {
    await hostile?.close();
    hostile = undefined;
  });
  const signal = new AbortController().signal;

  it('asks once while the lists keep failing, and again after a list succeeded', async () => {
    const { server, asked, listOk } = await notServing(json({ kind: 'APIResourceList', groupVersion: 'example.com/v1', resources: [{ name: 'websites', singularName: 'website', kind: 'Website', shortNames: ['ws'], namespaced: true }] }));
    hostile = server;
    const source = kubeSource(server.kubeConfig(), 'example.com/v1/ws');
    for (let i = 0; i < 3; i++) {
      const err = await source.list({}, signal).catch((e: unknown) => e);
      expect((err as Error).message).toBe('list example.com/v1/ws: 404 NotFound: example.com/v1 serves no resource "ws": did you mean "websites"? is the CRD installed?');
    }
    expect(asked).toEqual({ lists: 3, discovery: 1 });
    listOk.on = true;
    await source.list({}, signal);
    listOk.on = false;
    await expect(source.list({}, signal)).rejects.toBeInstanceOf(ResourceNotServedError);
    expect(asked).toEqual({ lists: 5, discovery: 2 });
  });

  it.each([
    ['a 500', (res: ServerResponse) => ((res.statusCode = 500), res.end('{}'))],
    ['a body that is not JSON', json('<html>nope</html>')],
    ['a document without resources', json({ kind: 'Status' })],
    ['a document larger than 4 MiB', json({ resources: [{ name: 'websites', pad: 'x'.repeat(5 * 1024 * 1024) }] })],
    ['a cut connection', (res: ServerResponse) => res.socket?.destroy()],
    ['a document that says the resource is served', json({ resources: [{ name: 'websitez' }] })],
  ])('keeps the plain 404 when discovery answers %s', async (_what, answer) => {
    const { server } = await notServing(answer);
    hostile = server;
    const err = await kubeSource(server.kubeConfig(), 'example.com/v1/websitez').list({}, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).not.toBeInstanceOf(ResourceNotServedError);
    expect((err as Error).message).toBe('list example.com/v1/websitez: 404 NotFound: the server could not find the requested resource');
  });

  it('quotes back only names that look like resource names, and at most three', async () => {
    const resources = [
      { name: 'website\u001b[2J', kind: 'Website' },
      { name: 'websites', singularName: 'web\u0007site' },
      ...Array.from({ length: 10 }, (_, i) => ({ name: `websit${i}` })),
      ...Array.from({ length: 5000 }, (_, i) => ({ name: `filler${i}` })),
    ];
    const { server } = await notServing(json({ resources }));
    hostile = server;
    const err = (await kubeSource(server.kubeConfig(), 'example.com/v1/websitey').list({}, signal).catch((e: unknown) => e)) as ResourceNotServedError;
    // The name with an escape is dropped, the singular name with a bell too; the plural of the latter is kept.
    expect(err.suggestions).toEqual(['websites', 'websit0', 'websit1']);
    expect(err.message).not.toMatch(/[\u0000-\u001f\u007f]/);
  });
});

describe('suggestions (CR-132)', () => {
  const served: ServedResource[] = [
    { name: 'websites', singularName: 'website', kind: 'Website', namespaced: true, shortNames: ['ws'] },
    { name: 'webhooks', singularName: 'webhook', kind: 'Webhook', namespaced: true, shortNames: [] },
    { name: 'policies', singularName: 'policy', kind: 'Policy', namespaced: true, shortNames: ['pol'] },
  ];
  it.each([
    ['website', ['websites']],
    ['Website', ['websites']],
    ['ws', ['websites']],
    ['webiste', ['websites']],
    ['webhoks', ['webhooks']],
    ['policys', ['policies']],
    ['pol', ['policies']],
    ['zebras', []],
  ])('%s → %j', (asked, expected) => {
    expect(suggest(asked, served)).toEqual(expected);
  });

  it('edit distance counts a swap of neighbours once and stops past its limit', () => {
    expect(distance('webiste', 'website', 3)).toBe(1);
    expect(distance('abc', 'abc', 0)).toBe(0);
    expect(distance('kitten', 'sitting', 5)).toBe(3);
    expect(distance('a', 'abcdefgh', 2)).toBe(3);
  });
});
