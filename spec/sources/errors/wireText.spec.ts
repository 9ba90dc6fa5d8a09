import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../../src/client/objectClient.js';
import { informer } from '../../../src/informer/informer.js';
import { ConnectionError, DecodeError, KubeApiError } from '../../../src/errors/api/index.js';
import { MAX_WIRE_TEXT } from '../../../src/errors/api/wireText.js';
import { kubeSource } from '../../../src/sources/kubeSource.js';
import { startHostileServer, type HostileServer } from '../../helpers/hostileServer.js';
import { renderings } from '../../helpers/secretFree.js';
import { waitFor } from '../../helpers/waitFor.js';

const TOKEN = 'sha256~hostile-echo-4f1d9c2be7a0';
const USER = 'admin';
const PASSWORD = 'correct-horse-battery';
/** What a terminal would act on: carriage return, title, OSC 52 clipboard write, 8-bit CSI, a bidi override, BEL. */
const ESCAPES = '\r\u001b]0;owned\u0007\u001b]52;c;ZWNobyBoaQ==\u0007\u009b2J\u202eevil\u0007';
/** Every character of the class HI-70 escapes except the line break that stacks and util.inspect put there themselves. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let server: HostileServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The server's kubeconfig with a bearer token, or basic auth, as the user. */
function withUser(s: HostileServer, user: { token: string } | { username: string; password: string }): KubeConfig {
  const kc = new KubeConfig();
  const cluster = s.kubeConfig().getCurrentCluster();
  kc.loadFromOptions({
    clusters: [{ name: 'hostile', server: cluster?.server ?? '', skipTLSVerify: true }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'hostile', cluster: 'hostile', user: 'u' }],
    currentContext: 'hostile',
  });
  return kc;
}

/** A Status that quotes the request's Authorization header (and its credential alone) with terminal escapes everywhere text goes. */
function hostileStatus(code: number, authorization: string, secret: string): object {
  const echo = `${ESCAPES} you sent Authorization: ${authorization}; token ${secret}`;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: echo,
    reason: `Forbidden${ESCAPES}${secret}`,
    code,
    metadata: { annotations: { echo } },
    details: { name: echo, kind: 'pods', causes: [{ reason: 'FieldValueInvalid', message: echo, field: `spec.${secret}` }], extra: echo },
  };
}

/** A server that echoes each request's own Authorization header in a Status of `code`: on lists and writes as the answer, on watches as an ERROR event. */
async function echoing(code: number, watchOnly = false): Promise<HostileServer> {
  server = await startHostileServer((req, res) => {
    const authorization = req.headers.authorization ?? '';
    const secret = authorization.slice(authorization.indexOf(' ') + 1);
    // Basic auth's decoded `user:password` too, as a proxy that logs it might quote it.
    const decoded = authorization.startsWith('Basic ') ? ` (${Buffer.from(secret, 'base64').toString('utf8')})` : '';
    const status = hostileStatus(code, authorization, `${secret}${decoded}`);
    if (req.url?.includes('watch=true') === true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
    } else if (watchOnly && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}');
    } else {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status));
    }
  });
  return server;
}

/** Checks that no way of printing `err` shows a raw control character or any of `secrets`, while the message still tells what was sent. */
function expectClean(err: unknown, secrets: readonly string[]): void {
  expect(err).toBeInstanceOf(KubeApiError);
  for (const text of renderings(err)) {
    expect(text).not.toMatch(RAW_CONTROL);
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
  const e = err as KubeApiError;
  // Escaped, not deleted: the reader sees what the server tried.
  expect(e.message).toContain('\\x1b]52;c;');
  expect(e.message).toContain('\\u202e');
  expect(e.message).toMatch(/you sent Authorization: (Bearer|Basic) <redacted>; token <redacted>/);
  expect(e.reason).toMatch(/^Forbidden\\x0d\\x1b/);
  expect(e.details?.details?.causes?.[0]?.message).toContain('<redacted>');
  expect(e.details?.details?.causes?.[0]?.field).toMatch(/^spec\.<redacted>/);
  expect(JSON.stringify(e.details)).not.toContain('annotations');
}

describe('wire text in errors (HI-79)', () => {
  it('an informer whose list is answered with a hostile Status reports it on errors$ and status$ escaped, without the bearer token', async () => {
    const s = await echoing(403);
    const inf = informer(kubeSource(withUser(s, { token: TOKEN }), 'v1/pods'), { reflector: { backoff: { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 } } });
    const errors: unknown[] = [];
    const backoffs: unknown[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.status$.subscribe((st) => {
      if (st.reflector?.state === 'backoff') backoffs.push(st.reflector.error);
    });
    const sub = inf.subscribe();
    try {
      await waitFor(() => errors.length >= 1 && backoffs.length >= 1, 'the 403 on errors$ and in a backoff on status$');
    } finally {
      sub.unsubscribe();
    }
    for (const err of [...errors, ...backoffs]) expectClean(err, [TOKEN]);
    expect((errors[0] as KubeApiError).status).toBe(403);
  });

  it("a watch ERROR event's Status reaches errors$ escaped, without the bearer token", async () => {
    const s = await echoing(500, true);
    const inf = informer(kubeSource(withUser(s, { token: TOKEN }), 'v1/pods'), { reflector: { backoff: { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 } } });
    const errors: unknown[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    const sub = inf.subscribe();
    try {
      await waitFor(() => errors.some((e) => e instanceof KubeApiError), 'the ERROR event on errors$');
    } finally {
      sub.unsubscribe();
    }
    const err = errors.find((e) => e instanceof KubeApiError) as KubeApiError;
    expect(err.message).toMatch(/^watch ERROR event: 500 Forbidden/);
    expectClean(err, [TOKEN]);
  });

  it("objectClient's get and apply reject with the Status escaped, without the bearer token", async () => {
    const s = await echoing(422);
    const pods = objectClient(withUser(s, { token: TOKEN }), 'v1/configmaps', { namespace: 'default' });
    const got = await pods.get('a').catch((e: unknown) => e);
    const applied = await pods.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }).catch((e: unknown) => e);
    for (const err of [got, applied]) {
      expectClean(err, [TOKEN]);
      expect((err as KubeApiError).status).toBe(422);
    }
  });

  it('basic auth: neither the base64 credential, the user:password pair nor the password reaches the error', async () => {
    const s = await echoing(401);
    const pods = objectClient(withUser(s, { username: USER, password: PASSWORD }), 'v1/configmaps', { namespace: 'default' });
    const err = await pods.get('a').catch((e: unknown) => e);
    const basic = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    expectClean(err, [basic, PASSWORD]);
    expect((err as Error).message).toContain('token <redacted> (<redacted>)');
  });

  it("a server's message is kept to MAX_WIRE_TEXT characters, and says how many more there were", async () => {
    server = await startHostileServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', message: 'x'.repeat(60_000), reason: 'InternalError', code: 500 }));
    });
    const err = (await objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' })
      .get('a')
      .catch((e: unknown) => e)) as KubeApiError;
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err.serverMessage).toBe(`${'x'.repeat(MAX_WIRE_TEXT)}… (${60_000 - MAX_WIRE_TEXT} more characters left out)`);
    expect(err.message.length).toBeLessThan(MAX_WIRE_TEXT + 200);
    expect(err.details?.message).toBe(err.serverMessage);
  });
});

/** A TCP server that answers every connection with `reply`, bytes no HTTP server would send. */
async function rawServer(reply: string): Promise<{ kubeConfig: KubeConfig; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const tcp: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end(reply));
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'raw', server: `http://127.0.0.1:${(tcp.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: TOKEN }],
    contexts: [{ name: 'raw', cluster: 'raw', user: 'u' }],
    currentContext: 'raw',
  });
  return {
    kubeConfig: kc,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => tcp.close(resolve));
    },
  };
}

describe('wire bytes in connection and decode errors (HI-79)', () => {
  it("an answer undici cannot parse: the ConnectionError's cause keeps neither the bytes nor the token they echoed", async () => {
    const raw = await rawServer(`HTTP/1.1 200 OK\r\nX-Echo: ${ESCAPES} ${TOKEN}\r\ncontent-length: 2\r\n\r\n{}`);
    try {
      const err = await objectClient(raw.kubeConfig, 'v1/configmaps', { namespace: 'default' })
        .get('a')
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      for (const text of renderings(err)) {
        expect(text).not.toMatch(RAW_CONTROL);
        expect(text).not.toContain(TOKEN);
      }
    } finally {
      await raw.close();
    }
  });

  it('a watch line that is not JSON: the DecodeError holds its text escaped', async () => {
    server = await startHostileServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"type":"ADDED","object":{"metadata":{"name":"${ESCAPES}"}}} ${ESCAPES}\n`);
    });
    const err = await (async () => {
      for await (const _ of kubeSource(server.kubeConfig(), 'v1/pods').watch({ resourceVersion: '1' }, new AbortController().signal)) {
        // nothing decodes
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).line).toContain('\\x1b]0;owned');
    for (const text of [...renderings(err), (err as DecodeError).line]) expect(text).not.toMatch(RAW_CONTROL);
  });
});
