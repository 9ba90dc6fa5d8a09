import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { pools } from '../../src/transport/pool.js';
import { startHostileServer, write, type HostileServer } from '../helpers/hostileServer.js';
import { waitFor } from '../helpers/waitFor.js';

// A server that keeps a request alive with a byte now and then: every byte used to restart the idle timer, so a
// list never synced and a watch never ended, and nothing was reported. A list now has a deadline that grows with
// the bytes received; a watch's idle timer restarts on complete events only.

let server: HostileServer | undefined;
let timer: NodeJS.Timeout | undefined;

afterEach(async () => {
  clearInterval(timer);
  await server?.close();
  server = undefined;
});

/** Answers 200 with `head`, then writes `drip` every few milliseconds, far more often than any idle timeout. */
async function trickling(head: string, drip: string): Promise<HostileServer> {
  server = await startHostileServer(async (_req, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    await write(res, head);
    const t = setInterval(() => void write(res, drip).catch(() => clearInterval(t)), 10);
    timer = t;
  });
  return server;
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (value) => ({ resolved: value }),
    (err: unknown) => err,
  );
}

async function closed(s: HostileServer): Promise<void> {
  await waitFor(() => s.open === 0 && pools.size === 0, 'the connection and pool to close');
}

describe('a server that trickles', () => {
  it('a list that trickles a byte at a time ends at its deadline with a ConnectionError code TIMEOUT', async () => {
    const s = await trickling('{"metadata":{"resourceVersion":"1"},"items":[', ' ');
    const source = kubeSource(s.kubeConfig(), 'v1/pods', { idleTimeoutMs: 60_000, listTimeoutMs: 300, listTimeoutPerMiBMs: 1000 });
    const err = await failure(source.list({}, new AbortController().signal));
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe('TIMEOUT');
    expect((err as Error).message).toMatch(/^list v1\/pods: the list took longer than listTimeoutMs plus listTimeoutPerMiBMs for the 0\.0 MiB received$/);
    await closed(s);
  });

  it('the list deadline holds for the page asked for early too', async () => {
    const s = await trickling('{"metadata":{"resourceVersion":"1","continue":"more"},"items":[', ' ');
    const source = kubeSource(s.kubeConfig(), 'v1/pods', { idleTimeoutMs: 60_000, listTimeoutMs: 300 });
    const response = source.listResponse({}, new AbortController().signal);
    expect((await response.head())?.continue).toBe('more');
    const err = await failure(response.page());
    expect((err as ConnectionError).code).toBe('TIMEOUT');
    await closed(s);
  });

  it('the deadline counts only time waiting for the server: a consumer that holds an item longer does not trip it', async () => {
    let release: (() => void) | undefined;
    const rest = new Promise<void>((resolve) => (release = resolve));
    server = await startHostileServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      await write(res, '{"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}}');
      await rest;
      res.end(',{"metadata":{"name":"b"}}]}');
    });
    const source = kubeSource(server.kubeConfig(), 'v1/pods', { idleTimeoutMs: 1000, listTimeoutMs: 1000, listTimeoutPerMiBMs: 0 });
    const names: string[] = [];
    for await (const pod of source.listItems({}, new AbortController().signal)) {
      names.push(pod.metadata?.name ?? '');
      if (names.length === 1) {
        // Held past both clocks, while the server has nothing to send: neither may count this.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        release?.();
      }
    }
    expect(names).toEqual(['a', 'b']);
    await closed(server);
  });

  it('a watch that trickles bytes of an event it never completes ends with IDLE_TIMEOUT', async () => {
    const s = await trickling('{"type":"ADDED","object":{"metadata":{"name":"', 'a');
    const err = await failure(
      (async () => {
        for await (const _ of kubeSource(s.kubeConfig(), 'v1/pods', { idleTimeoutMs: 300 }).watch({ resourceVersion: '1' }, new AbortController().signal)) {
          // no event ever completes
        }
      })(),
    );
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe('IDLE_TIMEOUT');
    expect((err as Error).message).toBe('watch v1/pods: no complete event from the server for 300 ms');
    await closed(s);
  });

  it('a watch of blank lines only is no progress either', async () => {
    const s = await trickling('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}\n', '\n');
    const names: string[] = [];
    const err = await failure(
      (async () => {
        for await (const ev of kubeSource(s.kubeConfig(), 'v1/pods', { idleTimeoutMs: 300 }).watch({ resourceVersion: '1' }, new AbortController().signal)) {
          names.push(ev.object.metadata?.name ?? '');
        }
      })(),
    );
    expect(names).toEqual(['a']);
    expect((err as ConnectionError).code).toBe('IDLE_TIMEOUT');
    await closed(s);
  });
});
