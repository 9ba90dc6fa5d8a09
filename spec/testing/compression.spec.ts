import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request, WireWatch } from './wire.js';

let server: ApiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Pods of about 1.1 KB each, so `count` of them make a list of about count × 1.1 KB. */
async function withPods(s: ApiServer, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await s.create('v1/pods', { metadata: { name: `p${i}`, namespace: 'default', annotations: { note: 'x'.repeat(1000) } } });
  }
}

describe('response compression, as kube-apiserver does it', () => {
  it('gzips a list larger than 128 KiB when the client accepts gzip, with Vary, and the body inflates to the same list', async () => {
    server = await startApiServer();
    await withPods(server, 150);
    const url = `${server.url}/api/v1/pods`;
    const plain = await request(url);
    const gzipped = await request(url, { acceptEncoding: 'deflate, gzip;q=0.8, br' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.wireBytes).toBeGreaterThan(128 * 1024);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['vary']).toBe('Accept-Encoding');
    expect(gzipped.headers['content-length']).toBeUndefined();
    expect(gzipped.wireBytes).toBeLessThan(plain.wireBytes / 10);
    expect(gzipped.json.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(plain.json.items.map((p: { metadata: { name: string } }) => p.metadata.name));
  });

  it('leaves a body of 128 KiB or less alone, and a client that does not ask', async () => {
    server = await startApiServer();
    await withPods(server, 150);
    const small = await request(`${server.url}/api/v1/pods?limit=100`, { acceptEncoding: 'gzip' });
    expect(small.wireBytes).toBeLessThan(128 * 1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect((await request(`${server.url}/api/v1/pods`, { acceptEncoding: 'br, deflate, gzipx' })).headers['content-encoding']).toBeUndefined();
  });

  it('never compresses a watch, however much it sends', async () => {
    server = await startApiServer();
    await withPods(server, 150);
    const w = await WireWatch.open(`${server.url}/api/v1/pods?watch=true`, { acceptEncoding: 'gzip' });
    try {
      await w.waitForLines(150);
      expect(w.headers['content-encoding']).toBeUndefined();
      expect(w.raw.length).toBeGreaterThan(128 * 1024);
    } finally {
      w.close();
    }
  });

  it('compresses nothing with compression: false, and rejects a non-boolean', async () => {
    server = await startApiServer({ compression: false });
    await withPods(server, 150);
    expect((await request(`${server.url}/api/v1/pods`, { acceptEncoding: 'gzip' })).headers['content-encoding']).toBeUndefined();
    await expect(startApiServer({ compression: 'yes' as never })).rejects.toThrow(/option "compression" must be a boolean, got "yes"/);
  });

  it('a cut fault on a compressed list halves the compressed bytes', async () => {
    server = await startApiServer();
    await withPods(server, 150);
    const whole = await request(`${server.url}/api/v1/pods`, { acceptEncoding: 'gzip' });
    server.faults.inject({ type: 'endMidLine' }, { verb: 'list' });
    await expect(request(`${server.url}/api/v1/pods`, { acceptEncoding: 'gzip' })).rejects.toThrow(/unexpected end of file/);
    expect(whole.headers['content-encoding']).toBe('gzip');
  });
});

describe('bearer tokens', () => {
  it('accepts more tokens while running, refuses a revoked one with 401, and hands out the newest in the kubeconfig', async () => {
    server = await startApiServer({ token: 'first' });
    const url = `${server.url}/api/v1/pods`;
    server.acceptToken('second');
    expect((await request(url, { token: 'first' })).status).toBe(200);
    expect((await request(url, { token: 'second' })).status).toBe(200);
    server.revokeToken('first');
    expect((await request(url, { token: 'first' })).status).toBe(401);
    expect((await request(url, { token: 'second' })).status).toBe(200);
    expect(server.kubeConfig().getCurrentUser()?.token).toBe('second');
  });

  it('refuses token changes on a server that authenticates nobody, and malformed tokens', async () => {
    server = await startApiServer();
    expect(() => server?.acceptToken('x')).toThrow(/acceptToken: the server was started without a token/);
    const authed = await startApiServer({ token: 't' });
    try {
      expect(() => authed.revokeToken('a b')).toThrow(/revokeToken: token must be a non-empty string without whitespace, got "a b"/);
    } finally {
      await authed.close();
    }
  });
});
