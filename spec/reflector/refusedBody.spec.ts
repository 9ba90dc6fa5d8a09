import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/reflector/classify.js';
import { reflect, type ReflectorStatus } from '../../src/reflector/index.js';
import { ConnectionError, DecodeError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/index.js';
import { startHostileServer, type HostileServer } from '../helpers/hostileServer.js';
import { waitFor } from '../helpers/waitFor.js';

// A body refused by a bound or an encoding will likely be sent again: the reflector waits for it as for a server
// fault (the shared, growing backoff), not at once as for a line that would not parse.

const LIST = '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}';

let server: HostileServer | undefined;
let sub: Subscription | undefined;

afterEach(async () => {
  sub?.unsubscribe();
  await server?.close();
  server = undefined;
});

async function firstBackoff(watchBody: string): Promise<Extract<ReflectorStatus, { state: 'backoff' }>> {
  server = await startHostileServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url?.includes('watch=true') === true ? watchBody : LIST);
  });
  const statuses: ReflectorStatus[] = [];
  const source = kubeSource(server.kubeConfig(), 'v1/pods', { maxObjectBytes: 1024, watchList: false });
  sub = reflect(source, { status: (s) => statuses.push(s), backoff: { initialMs: 10, maxMs: 20 } }).subscribe();
  return waitFor(() => statuses.find((s): s is Extract<ReflectorStatus, { state: 'backoff' }> => s.state === 'backoff'), 'a backoff');
}

describe('a refused body waits out the server backoff', () => {
  it('a watch line past maxObjectBytes: kind server', async () => {
    const backoff = await firstBackoff(`{"type":"ADDED","object":{"metadata":{"name":"${'a'.repeat(4096)}"}}}\n`);
    expect(backoff.error).toBeInstanceOf(DecodeError);
    expect((backoff.error as DecodeError).code).toBe('OBJECT_TOO_LARGE');
    expect(backoff.kind).toBe('server');
  });

  it('a line that does not parse: kind decode, retried at once as before', async () => {
    const backoff = await firstBackoff('{"type":"ADDED","object":\n');
    expect((backoff.error as DecodeError).code).toBeUndefined();
    expect(backoff.kind).toBe('decode');
  });

  it('a list that trickles past its deadline: a ConnectionError TIMEOUT, kind server', async () => {
    let drip: NodeJS.Timeout | undefined;
    server = await startHostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"metadata":{"resourceVersion":"1"},"items":[');
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 10);
      drip = t;
    });
    const statuses: ReflectorStatus[] = [];
    const source = kubeSource(server.kubeConfig(), 'v1/pods', { listTimeoutMs: 200, watchList: false });
    sub = reflect(source, { status: (s) => statuses.push(s), backoff: { initialMs: 10, maxMs: 20 } }).subscribe();
    const backoff = await waitFor(() => statuses.find((s): s is Extract<ReflectorStatus, { state: 'backoff' }> => s.state === 'backoff'), 'a backoff');
    clearInterval(drip);
    expect(backoff.error).toBeInstanceOf(ConnectionError);
    expect((backoff.error as ConnectionError).code).toBe('TIMEOUT');
    expect(backoff.kind).toBe('server');
  });

  it('every code but TRUNCATED is a server fault, in either phase', () => {
    for (const code of ['CONTENT_ENCODING', 'OBJECT_TOO_LARGE', 'LIST_TOO_LARGE', 'INFLATION_RATIO'] as const) {
      for (const phase of ['list', 'watch'] as const) {
        expect(classifyFailure(new DecodeError('refused', '', 0, { code }), phase)).toEqual({ kind: 'server', then: phase });
      }
    }
    expect(classifyFailure(new DecodeError('cut', '', 0, { code: 'TRUNCATED' }), 'list')).toEqual({ kind: 'decode', then: 'list' });
  });
});
