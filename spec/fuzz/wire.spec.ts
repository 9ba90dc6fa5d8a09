import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import type { Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { informer, type Informer } from '../../src/informer/index.js';
import { VeryShortWatchError } from '../../src/reflector/errors.js';
import { DecodeError, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { KeyError } from '../../src/store/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { nastyBytes, nastyString, params } from './fuzzKit.js';

const EXPECTED_ERRORS = [DecodeError, KeyError, KubeApiError, VeryShortWatchError];

/** Garbage a broken proxy or server might put on a watch stream, as the text of one or more lines. */
const garbage = fc.oneof(
  nastyString,
  nastyBytes.map((b) => Buffer.from(b).toString('latin1')),
  fc.constantFrom('{"type":"ADDED","object":{"kind":', '{"type":"ADDED","object":{"metadata":{"name":7}}}', '{"type":"NOPE","object":{}}', '[]', 'null', '{"type":"BOOKMARK","object":{}}', '\r', ' '),
);

describe('an informer over HTTP with garbage on its watch stream', () => {
  let server: ApiServer;
  let inf: Informer<V1Pod>;
  let life: Subscription | undefined;
  const errors: Error[] = [];
  let created = 0;

  beforeAll(async () => {
    server = await startApiServer();
    // Short backoffs: each garbage line is a fault of the same kind, whose backoff would otherwise grow to half a minute.
    inf = informer(kubeSource(server.kubeConfig(), 'v1/pods'), { reflector: { backoff: { initialMs: 5, maxMs: 50 } } });
    inf.errors$.subscribe((e) => errors.push(e));
    life = inf.subscribe();
    await inf.whenSynced();
  });

  afterAll(async () => {
    life?.unsubscribe();
    await server?.close();
  });

  it('property: whatever line arrives, errors are typed, the informer keeps running and every later object reaches the cache', async () => {
    await fc.assert(
      fc.asyncProperty(garbage, async (line) => {
        server.faults.inject({ type: 'malformedLine', line }, { verb: 'watch' });
        const name = `p-${created++}`;
        await server.create('v1/pods', pod(name));
        await waitFor(() => inf.store.getByKey(`default/${name}`), `${name} in the cache after ${JSON.stringify(line)}`, 15_000);
        server.faults.clear();
        for (const err of errors) expect(EXPECTED_ERRORS.some((cls) => err instanceof cls), `${err.name}: ${err.message}`).toBe(true);
      }),
      params(30),
    );
    // Every pod the server holds is cached; garbage that happened to be a valid event may add more, never fewer.
    for (let i = 0; i < created; i++) expect(inf.store.getByKey(`default/p-${i}`)).toBeDefined();
  });
});
