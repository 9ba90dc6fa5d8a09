import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStderrReporter, setErrorReporter } from '../../src/errors/reportError.js';
import { informer } from '../../src/informer/index.js';
import { ConnectionError, DecodeError, isUnauthorized, KubeApiError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { generateServingCertificate } from '../../src/testing/tls/tls.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { captureOutput, execPlugin, kubeConfigYaml, leakedSecrets, pemFragments, visibleTexts } from './secretScan.js';
import { Lifetimes } from '../helpers/lifetimes.js';

const hex = (): string => randomBytes(12).toString('hex');
const TOKEN = `tok-${hex()}`;
const WRONG_TOKEN = `wrong-${hex()}`;
const EXEC_TOKEN = `exec-${hex()}`;
const PROXY_PASSWORD = `proxypw-${hex()}`;
/** A client certificate and key, as a kubeconfig's user would hold them (made before the tests run). */
let client: { readonly certPem: string; readonly keyPem: string };
/** Another key, which does not match the certificate. */
let otherKeyPem: string;
let KEY_FRAGMENTS: string[] = [];
/** Text inside a broken key: whatever the TLS layer says about it must not quote it. */
const BROKEN_KEY_MARKER = `brokenkey${hex()}`;
const BROKEN_KEY_PEM = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(`${BROKEN_KEY_MARKER}${'A'.repeat(40)}`).toString('base64')}\n-----END PRIVATE KEY-----\n`;

let SECRETS: string[] = [];

beforeAll(async () => {
  client = await generateServingCertificate();
  otherKeyPem = (await generateServingCertificate()).keyPem;
  KEY_FRAGMENTS = pemFragments(client.keyPem);
  SECRETS = [TOKEN, WRONG_TOKEN, EXEC_TOKEN, PROXY_PASSWORD, BROKEN_KEY_MARKER, ...KEY_FRAGMENTS, ...pemFragments(otherKeyPem), ...pemFragments(BROKEN_KEY_PEM)];
});

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Everything a user could see from one run: errors thrown, errors$ and status$ emissions, what whenSynced rejected with, and the process's output. */
interface Seen {
  readonly errors: Error[];
  readonly statuses: unknown[];
  readonly thrown: unknown[];
  output: string;
  synced: boolean;
}

/** Checks that a run produced something to search, then that nothing it shows holds a secret, including what the stderr reporter writes of its errors. */
function expectNoSecrets(seen: Seen): void {
  const lines: string[] = [];
  const report = createStderrReporter({ intervalMs: 0, write: (line) => lines.push(line) });
  for (const err of seen.errors) report(err);
  for (const err of seen.thrown) report(err instanceof Error ? err : new Error(String(err)));
  expect(lines.length).toBe(seen.errors.length + seen.thrown.length);
  expect(leakedSecrets(seen.errors, SECRETS), 'errors$').toEqual([]);
  expect(leakedSecrets(seen.thrown, SECRETS), 'thrown errors').toEqual([]);
  expect(leakedSecrets(seen.statuses, SECRETS), 'status$').toEqual([]);
  expect(leakedSecrets(lines, SECRETS), 'stderr reporter').toEqual([]);
  expect(leakedSecrets(seen.output, SECRETS), 'process output').toEqual([]);
}

/**
 * Runs an informer on v1/pods until `until` holds, with `during` run once
 * it is synced (to provoke errors), and collects everything it showed.
 */
async function runInformer(kc: KubeConfig, until: (seen: Seen) => boolean, during?: (seen: Seen) => Promise<void>): Promise<Seen> {
  const seen: Seen = { errors: [], statuses: [], thrown: [], output: '', synced: false };
  const output = captureOutput();
  const life = new Lifetimes();
  const inf = life.track(informer(kubeSource(kc, 'v1/pods')));
  const subs = [inf.errors$.subscribe((e) => seen.errors.push(e)), inf.status$.subscribe((s) => seen.statuses.push(s))];
  try {
    inf.subscribe();
    inf.whenSynced().then(
      () => (seen.synced = true),
      (err: unknown) => seen.thrown.push(err),
    );
    if (during !== undefined) {
      await waitFor(() => seen.synced, 'the informer to sync');
      await during(seen);
    }
    await waitFor(() => until(seen), 'the errors to provoke', 20_000).catch((err: Error) => {
      throw new Error(`${err.message}; saw ${seen.errors.map((e) => `${e.name} ${e.message}`).join(' | ')}`);
    });
  } finally {
    await life.end();
    for (const s of subs) s.unsubscribe();
    output.stop();
    seen.output = output.text();
  }
  return seen;
}

/** Lists and watches once with kubeSource directly, keeping what each throws. */
async function direct(kc: KubeConfig): Promise<unknown[]> {
  const thrown: unknown[] = [];
  const source = kubeSource(kc, 'v1/pods');
  const ac = new AbortController();
  try {
    await source.list({}, ac.signal);
  } catch (err) {
    thrown.push(err);
  }
  try {
    for await (const ev of source.watch({ resourceVersion: '0', timeoutSeconds: 1 }, ac.signal)) void ev;
  } catch (err) {
    thrown.push(err);
  }
  ac.abort();
  return thrown;
}

/** A port on 127.0.0.1 with nothing listening. */
async function refusedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function load(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}

describe('the secret scan itself', () => {
  it('finds a secret in a message, a nested cause, a hidden property, JSON and a status object', () => {
    const hidden = new Error('outer');
    Object.defineProperty(hidden, 'config', { value: { headers: { authorization: `Bearer ${TOKEN}` } }, enumerable: false });
    expect(leakedSecrets(new Error('x', { cause: new AggregateError([new Error(`token ${TOKEN}`)]) }), [TOKEN])).toEqual([TOKEN]);
    expect(leakedSecrets(hidden, [TOKEN])).toEqual([TOKEN]);
    expect(leakedSecrets([{ state: 'failed', lastError: new Error('a', { cause: { body: KEY_FRAGMENTS[1] } }) }], SECRETS)).toEqual([KEY_FRAGMENTS[1]]);
    expect(leakedSecrets(new Error('clean'), SECRETS)).toEqual([]);
    expect(visibleTexts(new Error('m')).some((t) => t.includes('Error: m'))).toBe(true);
  });
});

describe('credentials never appear in what rxkube shows', () => {
  let server: ApiServer;
  let tlsServer: ApiServer;
  let execServer: ApiServer;

  beforeAll(async () => {
    [server, tlsServer, execServer] = await Promise.all([startApiServer({ token: TOKEN }), startApiServer({ tls: true, token: TOKEN }), startApiServer({ token: EXEC_TOKEN })]);
    for (const s of [server, tlsServer, execServer]) await s.create('v1/pods', pod('web'));
  });

  afterAll(async () => {
    await Promise.all([server?.close(), tlsServer?.close(), execServer?.close()]);
  });

  /**
   * Makes a synced informer meet a 401, a 403 and a 500 on re-watching, a
   * malformed watch line and an ERROR event, each waited for on errors$
   * before the next is armed. A stream fault is taken by the next event an
   * open watch writes, and a watch the client has just dropped may take it
   * first: so it is armed again, with one more write, until it shows.
   */
  async function provoke(s: ApiServer, seen: Seen, codes: readonly (401 | 403 | 500)[] = [401, 403, 500]): Promise<void> {
    for (const status of codes) s.faults.inject({ type: 'status', status }, { verb: 'watch' });
    s.faults.closeWatches();
    await waitFor(() => codes.every((code) => seen.errors.some((e) => e instanceof KubeApiError && e.status === code)), `a ${codes.join(', ')}`, 20_000);
    await streamFault(s, seen, { type: 'malformedLine' }, (e) => e instanceof DecodeError);
    await streamFault(s, seen, { type: 'errorEvent', status: 500, reason: 'InternalError', message: 'boom' }, (e) => e instanceof KubeApiError && /ERROR event/.test(e.message));
  }

  async function streamFault(s: ApiServer, seen: Seen, fault: Parameters<ApiServer['faults']['inject']>[0], shown: (e: Error) => boolean): Promise<void> {
    for (let i = 0; i < 20 && !seen.errors.some(shown); i++) {
      if (s.faults.pending() === 0) s.faults.inject(fault, { verb: 'watch' });
      await s.create('v1/pods', pod(`p-${hex()}`));
      await waitFor(() => seen.errors.some(shown), `the ${fault.type} fault on errors$`, 2_000).catch(() => undefined);
    }
    s.faults.clear();
    expect(seen.errors.some(shown), `the ${fault.type} fault never showed on errors$`).toBe(true);
  }

  const provoked = (seen: Seen): boolean => seen.errors.some((e) => isUnauthorized(e)) && seen.errors.some((e) => e instanceof DecodeError);

  it('a bearer token: errors$ of a working informer (401, 403, 500, bad lines, ERROR events), status$, the reporter and the output', async () => {
    const seen = await runInformer(server.kubeConfig(), provoked, (seen) => provoke(server, seen));
    expect(seen.synced).toBe(true);
    expectNoSecrets(seen);
  });

  it('a wrong bearer token: every 401 of kubeSource and of an informer that never syncs', async () => {
    const kc = load(kubeConfigYaml({ server: server.url }, { token: WRONG_TOKEN }));
    const thrown = await direct(kc);
    expect(thrown).toHaveLength(2);
    for (const err of thrown) expect(isUnauthorized(err)).toBe(true);
    const seen = await runInformer(kc, (s) => s.errors.filter((e) => isUnauthorized(e)).length >= 2);
    expect(seen.synced).toBe(false);
    seen.thrown.push(...thrown);
    expectNoSecrets(seen);
  });

  it('errors nobody listens to: the process-wide stderr reporter writes them without the credential', async () => {
    // A fresh default reporter, so no earlier line of the same kind holds this one back.
    setErrorReporter(undefined);
    const output = captureOutput();
    const life = new Lifetimes();
    const inf = life.track(informer(kubeSource(load(kubeConfigYaml({ server: server.url }, { token: WRONG_TOKEN })), 'v1/pods')));
    try {
      inf.subscribe();
      await waitFor(() => /rxkube: KubeApiError: .*401/.test(output.text()), 'the 401 on stderr', 20_000);
    } finally {
      await life.end();
      output.stop();
    }
    expect(leakedSecrets(output.text(), SECRETS)).toEqual([]);
  });

  it('a refused port, directly and through a proxy URL carrying a password', async () => {
    const port = await refusedPort();
    const kc = load(kubeConfigYaml({ server: `http://127.0.0.1:${port}` }, { token: TOKEN }));
    const thrown = await direct(kc);
    expect(thrown).toHaveLength(2);
    for (const err of thrown) expect((err as ConnectionError).code).toBe('ECONNREFUSED');
    const proxied = load(kubeConfigYaml({ server: server.url, 'proxy-url': `http://user:${PROXY_PASSWORD}@127.0.0.1:${port}` }, { token: TOKEN }));
    const viaProxy = await direct(proxied);
    expect(viaProxy).toHaveLength(2);
    for (const err of viaProxy) expect(err).toBeInstanceOf(ConnectionError);
    const seen = await runInformer(kc, (s) => s.errors.filter((e) => e instanceof ConnectionError).length >= 2);
    expect(seen.synced).toBe(false);
    seen.thrown.push(...thrown, ...viaProxy);
    expectNoSecrets(seen);
  });

  it('a client certificate and key over TLS: a working informer meeting faults, and a server that refuses the connection', async () => {
    const ca = (tlsServer.kubeConfig().getCurrentCluster()?.caData as string) ?? '';
    expect(ca).not.toBe('');
    const kc = load(kubeConfigYaml({ server: tlsServer.url, 'certificate-authority-data': ca }, { token: TOKEN, 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) }));
    const seen = await runInformer(kc, provoked, (seen) => provoke(tlsServer, seen, [401]));
    expect(seen.synced).toBe(true);
    const refused = load(kubeConfigYaml({ server: `https://127.0.0.1:${await refusedPort()}`, 'certificate-authority-data': ca }, { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) }));
    seen.thrown.push(...(await direct(refused)));
    expect(seen.thrown.every((e) => e instanceof ConnectionError)).toBe(true);
    expectNoSecrets(seen);
  });

  it('a client key that does not parse, or does not match its certificate', async () => {
    const ca = (tlsServer.kubeConfig().getCurrentCluster()?.caData as string) ?? '';
    const thrown: unknown[] = [];
    for (const key of [BROKEN_KEY_PEM, otherKeyPem]) {
      const kc = load(kubeConfigYaml({ server: tlsServer.url, 'certificate-authority-data': ca }, { token: TOKEN, 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(key) }));
      thrown.push(...(await direct(kc)));
    }
    expect(thrown).toHaveLength(4);
    for (const err of thrown) expect(err, String(err)).toBeInstanceOf(ConnectionError);
    expectNoSecrets({ errors: [], statuses: [], thrown, output: '', synced: false });
  });

  describe('an exec credential plugin', () => {
    const credential = (token: string): string => JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token } });
    const execUser = (command: string): Record<string, unknown> => ({ exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command, interactiveMode: 'Never' } });

    it('whose token works: errors$ of an informer meeting faults', async () => {
      const plugin = execPlugin(credential(EXEC_TOKEN));
      try {
        const kc = load(kubeConfigYaml({ server: execServer.url }, execUser(plugin.path)));
        const seen = await runInformer(kc, provoked, (seen) => provoke(execServer, seen, [401]));
        expect(seen.synced).toBe(true);
        expectNoSecrets(seen);
      } finally {
        plugin.remove();
      }
    });

    it('whose token is refused: the 401s', async () => {
      const plugin = execPlugin(credential(EXEC_TOKEN));
      try {
        const kc = load(kubeConfigYaml({ server: server.url }, execUser(plugin.path)));
        const thrown = await direct(kc);
        for (const err of thrown) expect(isUnauthorized(err)).toBe(true);
        expectNoSecrets({ errors: [], statuses: [], thrown, output: '', synced: false });
      } finally {
        plugin.remove();
      }
    });

    it('that prints a bare token instead of ExecCredential JSON, or puts it on stderr when it fails', async () => {
      // A short token fits whole into the JSON parser's message, which quotes the start of what it could not read.
      const short = `tk${hex().slice(0, 8)}`;
      for (const plugin of [execPlugin(short), execPlugin('', { stderr: `token ${short} expired`, code: 1 })]) {
        try {
          const thrown = await direct(load(kubeConfigYaml({ server: execServer.url }, execUser(plugin.path))));
          expect(thrown.length).toBeGreaterThan(0);
          for (const err of thrown) expect((err as ConnectionError).code).toBe('CREDENTIALS');
          const texts = thrown.flatMap((err) => visibleTexts(err)).join('\n');
          expect(texts).not.toContain(short);
        } finally {
          plugin.remove();
        }
      }
    });

    it('that fails after printing its credential, with a message of its own on stderr', async () => {
      const plugin = execPlugin(credential(EXEC_TOKEN), { stderr: 'plugin: login expired', code: 1 });
      try {
        const thrown = await direct(load(kubeConfigYaml({ server: execServer.url }, execUser(plugin.path))));
        expect(thrown).toHaveLength(2);
        for (const err of thrown) expect((err as ConnectionError).code).toBe('CREDENTIALS');
        expectNoSecrets({ errors: [], statuses: [], thrown, output: '', synced: false });
      } finally {
        plugin.remove();
      }
    });
  });
});
