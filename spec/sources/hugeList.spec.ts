import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeSource } from '../../src/sources/kubeSource.js';

// V8's largest string is 2^29 - 24 characters (~512 MiB); a body past it cannot be read as one string.
const V8_MAX_STRING = 2 ** 29 - 24;
const CHUNK_BYTES = 1 << 20;
const CHUNKS = 520;

/** One MiB of complete, comma-terminated small pod objects, built once and written many times. */
function buildChunk(): { bytes: Buffer; items: number } {
  const parts: string[] = [];
  let size = 0;
  let n = 0;
  for (;;) {
    const item = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-${n}","namespace":"default","resourceVersion":"${n + 1}","labels":{"app":"huge"}},"spec":{"nodeName":"node-${n % 7}"}},`;
    if (size + item.length > CHUNK_BYTES) break;
    parts.push(item);
    size += item.length;
    n++;
  }
  return { bytes: Buffer.from(parts.join('')), items: n };
}

describe('a LIST body larger than V8 can hold as one string', () => {
  let server: Server;
  let port = 0;
  let bytesWritten = 0;
  const chunk = buildChunk();
  const expectedItems = chunk.items * CHUNKS + 1;

  beforeAll(async () => {
    server = createServer((req, res) => {
      void (async () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const write = (b: Buffer | string): Promise<void> | undefined => {
          bytesWritten += Buffer.byteLength(b);
          return res.write(b) ? undefined : new Promise((resolve) => res.once('drain', resolve));
        };
        await write('{"kind":"PodList","apiVersion":"v1","items":[');
        for (let i = 0; i < CHUNKS && !req.destroyed; i++) await write(chunk.bytes);
        // The envelope's metadata comes after the items, so the decoder must find it at the very end.
        await write('{"metadata":{"name":"last"}}],"metadata":{"resourceVersion":"424242"}}');
        res.end();
      })();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('streams every item and reads the resourceVersion that follows them', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'huge', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'nobody' }],
      contexts: [{ name: 'huge', cluster: 'huge', user: 'nobody' }],
      currentContext: 'huge',
    });
    const source = kubeSource(kc, 'v1/pods');
    const stream = source.listItems({ limit: 0 }, new AbortController().signal);
    const started = performance.now();
    let count = 0;
    let last = '';
    for await (const item of stream) {
      count++;
      last = item.metadata?.name ?? '';
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`huge list: ${(bytesWritten / 2 ** 20).toFixed(0)} MiB, ${count} items in ${seconds.toFixed(1)} s`);
    expect(bytesWritten).toBeGreaterThan(V8_MAX_STRING);
    expect(count).toBe(expectedItems);
    expect(last).toBe('last');
    expect(stream.envelope?.metadata.resourceVersion).toBe('424242');
    expect(stream.envelope?.kind).toBe('PodList');
  }, 300_000);
});
