import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { DecodeError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { withTransport } from '../../src/transport/options.js';
import { settled, startHostileServer, type HostileServer } from '../helpers/hostileServer.js';
import { trapUnhandled } from '../helpers/unhandled.js';

const LIST = '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"d"}}]}';
const POD = '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"d","resourceVersion":"5"}}';

let server: HostileServer | undefined;
const unhandled = trapUnhandled();

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server answering every request with `status`, `encoding` and a body of `size` bytes, sent slowly enough to be cut mid-way. */
async function answering(status: number, encoding: string, body = LIST): Promise<HostileServer> {
  server = await startHostileServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': encoding });
    // More than one chunk: the client refuses the body while undici still has some of it to read.
    res.write(body);
    setTimeout(() => res.end(' '.repeat(100_000)), 20);
  });
  return server;
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => ({ resolved: value }),
    (err: unknown) => err,
  );
}

describe('a content-encoding rxkube did not ask for', () => {
  for (const encoding of ['br', 'zstd', 'compress', 'gzip, gzip', 'x-unknown']) {
    it(`${encoding}: a list is refused with a typed DecodeError, and nothing crashes`, async () => {
      const s = await answering(200, encoding);
      const err = await failure(kubeSource(s.kubeConfig(), 'v1/pods').list({}, new AbortController().signal));
      expect(err).toBeInstanceOf(DecodeError);
      expect((err as DecodeError).code).toBe('CONTENT_ENCODING');
      expect((err as Error).message).toMatch(/^list v1\/pods: /);
      await settled(s, unhandled);
    });
  }

  it('on a watch, with compression off, the same', async () => {
    const s = await answering(200, 'br', '{"type":"ADDED","object":' + POD + '}\n');
    const kc = withTransport(s.kubeConfig(), { compression: false });
    const err = await failure(
      (async () => {
        for await (const _ of kubeSource(kc, 'v1/pods').watch({ resourceVersion: '1' }, new AbortController().signal)) {
          // nothing arrives
        }
      })(),
    );
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).code).toBe('CONTENT_ENCODING');
    await settled(s, unhandled);
  });

  it('on an object client read, the same', async () => {
    const s = await answering(200, 'zstd', POD);
    const err = await failure(objectClient(s.kubeConfig(), 'v1/pods', { namespace: 'd' }).get('a'));
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).code).toBe('CONTENT_ENCODING');
    await settled(s, unhandled);
  });

  it('on a 403, the same: the body cannot be read, so its Status is not guessed at', async () => {
    const s = await answering(403, 'br', '{"kind":"Status","code":403}');
    const err = await failure(kubeSource(s.kubeConfig(), 'v1/pods').list({}, new AbortController().signal));
    expect(err).toBeInstanceOf(DecodeError);
    await settled(s, unhandled);
  });

  it('gzip followed by identity is still gzip: the list decodes', async () => {
    server = await startHostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip, identity' });
      res.end(gzipSync(LIST));
    });
    const page = await kubeSource(server.kubeConfig(), 'v1/pods').list({}, new AbortController().signal);
    expect(page.items.map((p) => p.metadata?.name)).toEqual(['a']);
    await settled(server, unhandled);
  });
});
