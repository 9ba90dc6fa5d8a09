import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { DecodeError } from '../../src/errors/api/index.js';
import { getBody } from '../../src/sources/http.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { pools } from '../../src/transport/pool.js';
import { withTransport } from '../../src/transport/options.js';
import { waitFor } from '../helpers/waitFor.js';
import { startRelayed, type Relayed } from './relay.js';

interface Pod {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
}

const PODS = { version: 'v1', plural: 'pods' } as const;

let current: Relayed | undefined;

afterEach(async () => {
  await current?.close();
  current = undefined;
});

/** A simulator with `count` pods of about 1 KB, a third of it random (so they compress about as real pods do). */
async function setup(count: number): Promise<Relayed> {
  current = await startRelayed({ tls: true });
  for (let i = 0; i < count; i++) {
    const annotations = { 'example.com/config': `${'{"replicas":3,"image":"registry.example.com/team/app:v1.2.3"},'.repeat(10)}`, 'example.com/id': randomBytes(200).toString('base64') };
    await current.server.create('v1/pods', { metadata: { name: `p${i}`, namespace: 'default', annotations } });
  }
  return current;
}

async function nothingOpen(r: Relayed): Promise<void> {
  await waitFor(() => r.relay.open === 0 && pools.size === 0, 'every connection and pool to close');
}

describe('compression', () => {
  it('asks for gzip by default: a large list crosses the wire in a fraction of the bytes and decodes to the same items', async () => {
    const r = await setup(300);
    const signal = new AbortController().signal;
    const before = r.relay.bytesToClients;
    const compressed = await kubeSource<Pod>(r.kubeConfig(), PODS, { pageSize: 0 }).list({}, signal);
    const compressedBytes = r.relay.bytesToClients - before;
    const middle = r.relay.bytesToClients;
    const plain = await kubeSource<Pod>(withTransport(r.kubeConfig(), { compression: false }), PODS, { pageSize: 0 }).list({}, signal);
    const plainBytes = r.relay.bytesToClients - middle;
    expect(compressed.items).toHaveLength(300);
    expect(compressed.items).toEqual(plain.items);
    expect(plainBytes).toBeGreaterThan(300_000);
    expect(compressedBytes).toBeLessThan(plainBytes / 2);
    await nothingOpen(r);
  });

  it('inflates as bytes arrive: the first item is decoded long before the body has crossed the wire', async () => {
    const r = await setup(300);
    const signal = new AbortController().signal;
    const before = r.relay.bytesToClients;
    await kubeSource<Pod>(r.kubeConfig(), PODS, { pageSize: 0 }).list({}, signal);
    const total = r.relay.bytesToClients - before;
    r.server.faults.inject({ type: 'trickle', bytesPerChunk: 4096, intervalMs: 2 }, { verb: 'list' });
    const start = r.relay.bytesToClients;
    let atFirstItem: number | undefined;
    let items = 0;
    for await (const _pod of kubeSource<Pod>(r.kubeConfig(), PODS, { pageSize: 0 }).listItems({}, signal)) {
      atFirstItem ??= r.relay.bytesToClients - start;
      items++;
    }
    expect(items).toBe(300);
    expect(atFirstItem).toBeLessThan(total / 4);
    await nothingOpen(r);
  });

  it('hands the decoders inflated chunks, never the body whole', async () => {
    const r = await setup(300);
    const url = `${r.kubeConfig().getCurrentCluster()?.server ?? ''}/api/v1/pods`;
    const sizes: number[] = [];
    for await (const chunk of getBody(r.kubeConfig(), url, 'list v1/pods', new AbortController().signal, { idleTimeoutMs: 10_000 })) sizes.push(chunk.length);
    const body = sizes.reduce((a, b) => a + b, 0);
    expect(body).toBeGreaterThan(300_000);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024);
    await nothingOpen(r);
  });

  it('a compressed body cut short is a DecodeError of code TRUNCATED, as the same body uncompressed, and leaves no socket', async () => {
    const r = await setup(300);
    r.server.faults.inject({ type: 'endMidLine' }, { verb: 'list' });
    const err = await kubeSource<Pod>(r.kubeConfig(), PODS, { pageSize: 0 })
      .list({}, new AbortController().signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).code).toBe('TRUNCATED');
    expect(String((err as Error).message)).toMatch(/^list v1\/pods: the gzip body ended before it was complete/);
    r.server.faults.inject({ type: 'endMidLine' }, { verb: 'list' });
    const plain = await kubeSource<Pod>(withTransport(r.kubeConfig(), { compression: false }), PODS, { pageSize: 0 })
      .list({}, new AbortController().signal)
      .catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(DecodeError);
    expect((plain as DecodeError).code).toBe('TRUNCATED');
    await nothingOpen(r);
  });

  it('a single object larger than 128 KiB comes compressed to the object client too', async () => {
    const r = await setup(0);
    const cms = objectClient(r.kubeConfig(), 'v1/configmaps', { namespace: 'default' });
    const data = { blob: randomBytes(70_000).toString('hex') };
    await cms.create({ metadata: { name: 'big' }, data } as never);
    const before = r.relay.bytesToClients;
    const got = (await cms.get('big')) as { data?: Record<string, string> };
    expect(got.data).toEqual(data);
    // Hex halves under gzip; an uncompressed answer would be over 140 000 bytes.
    expect(r.relay.bytesToClients - before).toBeLessThan(100_000);
    await nothingOpen(r);
  });
});
