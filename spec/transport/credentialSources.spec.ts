import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { ConnectionError } from '../../src/errors/api/index.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { withTransport } from '../../src/transport/options.js';
import { pools } from '../../src/transport/pool.js';

const TOKEN = 'sources-spec-token-91c2';

let server: ApiServer;
let dir: string;
/** Processes a test started to unblock a read it expects never to happen; ended after the test. */
const writers: ChildProcess[] = [];

beforeAll(async () => {
  server = await startApiServer({ token: TOKEN });
  await server.create('v1/configmaps', { metadata: { name: 'a', namespace: 'default' } });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  // Each writer leads a process group of its own, so its `sleep` ends with it.
  for (const w of writers.splice(0)) if (w.pid !== undefined && w.exitCode === null) process.kill(-w.pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function kubeConfig(user: Omit<User, 'name'>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sim', server: server.url, skipTLSVerify: false }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'sim', cluster: 'sim', user: 'u' }],
    currentContext: 'sim',
  });
  return kc;
}

async function getFails(kc: KubeConfig, timeoutMs?: number): Promise<ConnectionError> {
  const err = await objectClient(kc, 'v1/configmaps', { namespace: 'default', ...(timeoutMs !== undefined && { timeoutMs }) })
    .get('a')
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectionError);
  expect((err as ConnectionError).code).toBe('CREDENTIALS');
  return err as ConnectionError;
}

/** An HTTP proxy on 127.0.0.1 that forwards or tunnels to wherever it is asked, counting what it carried. */
async function connectProxy(): Promise<{ url: string; tunnels: () => number; close: () => Promise<void> }> {
  let tunnels = 0;
  const sockets = new Set<Socket>();
  // Plain http: targets are asked for in absolute form; https: ones through CONNECT.
  const proxy = createServer((req, res) => {
    tunnels++;
    const onward = request(req.url ?? '', { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    onward.on('error', () => res.destroy());
    req.pipe(onward);
  });
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels++;
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels: () => tunnels,
    close: async () => {
      for (const s of sockets) s.destroy();
      proxy.close();
      await once(proxy, 'close');
    },
  };
}

describe('a cluster behind a proxy', () => {
  it('builds the proxy connection without running the exec plugin a second time', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-cred-'));
    const runs = join(dir, 'runs');
    const plugin = join(dir, 'plugin.mjs');
    const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: TOKEN } });
    writeFileSync(plugin, `import { appendFileSync } from 'node:fs'; appendFileSync(${JSON.stringify(runs)}, 'run\\n'); process.stdout.write(${JSON.stringify(credential)});`);
    const proxy = await connectProxy();
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'sim', server: server.url, skipTLSVerify: false, proxyUrl: proxy.url }],
        users: [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' } }],
        contexts: [{ name: 'sim', cluster: 'sim', user: 'u' }],
        currentContext: 'sim',
      });
      const cm = await objectClient(kc, 'v1/configmaps', { namespace: 'default' }).get('a');
      expect(cm.metadata?.name).toBe('a');
      expect(proxy.tunnels()).toBeGreaterThan(0);
      expect(readFileSync(runs, 'utf8')).toBe('run\n');
    } finally {
      pools.closeAll();
      await proxy.close();
    }
  });
});

describe('credential sources that could stop the whole process', () => {
  it('a FIFO named as the client certificate and key is refused before it is opened, which would block the event loop', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-cred-'));
    const fifo = join(dir, 'key.pem');
    execFileSync('mkfifo', [fifo]);
    // Were the FIFO opened, this writer would end the blocked read after a while (with no key in it), so a
    // regression fails the assertions below instead of hanging the worker.
    const writer = spawn('sh', ['-c', `sleep 3; while :; do printf x > '${fifo}'; done`], { stdio: 'ignore', detached: true });
    writers.push(writer);
    const err = await getFails(kubeConfig({ token: TOKEN, keyFile: fifo, certFile: fifo }));
    expect(err.message).toMatch(/client-certificate file is not a regular file/);
  });

  it('a gcp or azure auth provider whose token must be refreshed is refused rather than run with execSync', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-cred-'));
    const cmd = join(dir, 'refresh.sh');
    // A refresh that takes a while, then answers a token the server accepts: run synchronously it would
    // block the process for its duration and then succeed.
    writeFileSync(cmd, ['#!/bin/sh', 'sleep 3', `printf '{"token":"${TOKEN}","expiry":"2999-01-01T00:00:00Z"}'`, ''].join('\n'));
    chmodSync(cmd, 0o755);
    for (const name of ['gcp', 'azure']) {
      const provider = { name, config: { 'cmd-path': cmd, 'token-key': '{.token}', 'expiry-key': '{.expiry}', 'access-token': 'old', expiry: '2000-01-01T00:00:00Z' } };
      const err = await getFails(kubeConfig({ authProvider: provider }));
      expect(err.message).toMatch(new RegExp(`the ${name} auth provider's token is missing or expired`));
    }
  });

  it('a gcp auth provider holding an unexpired token still works', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-cred-'));
    const provider = { name: 'gcp', config: { 'access-token': TOKEN, expiry: '2999-01-01T00:00:00Z' } };
    const cm = await objectClient(kubeConfig({ authProvider: provider }), 'v1/configmaps', { namespace: 'default' }).get('a');
    expect(cm.metadata?.name).toBe('a');
  });
});

describe('a credential provider of client-node that never answers', () => {
  it('is bounded by the request and by credentialTimeoutMs: typed CREDENTIALS errors, no secret in them', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rxkube-cred-'));
    const secret = 'provider-secret-5be1';
    const hanging = (): KubeConfig => {
      const kc = kubeConfig({ authProvider: { name: 'hangs', config: { secret } } });
      // client-node's public hook for providers of one's own; this one never settles.
      kc.addAuthenticator({ isAuthProvider: (user: User) => user.authProvider?.name === 'hangs', applyAuthentication: () => new Promise<void>(() => undefined) });
      return kc;
    };
    const viaClient = await getFails(hanging(), 300);
    expect(viaClient.message).toMatch(/abandoned: the request was cancelled or ran out of time/);
    const viaBound = await getFails(withTransport(hanging(), { credentialTimeoutMs: 200 }));
    expect(viaBound.message).toMatch(/no credential within 200 ms/);
    for (const err of [viaClient, viaBound]) expect(`${String(err)} ${JSON.stringify(err)} ${String(err.cause)}`).not.toContain(secret);
  });
});
