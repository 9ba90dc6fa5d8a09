import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { informer } from '../../src/informer/informer.js';
import { ConnectionError } from '../../src/errors/api/index.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { execRunsInProgress } from '../../src/transport/execCredential.js';
import { withTransport } from '../../src/transport/options.js';
import { pools } from '../../src/transport/pool.js';
import { runNode } from '../helpers/runExample.js';
import { waitFor } from '../helpers/waitFor.js';

const TOKEN = 'exec-spec-token-7f3a9c';
/** What a plugin prints before it hangs: a token-like line that must never reach an error. */
const LEAK = 'leaked-plugin-output-d41d8c';

let server: ApiServer;
/** Temp dirs of this test's plugins. */
const dirs: string[] = [];
let scripts = 0;

beforeAll(async () => {
  server = await startApiServer({ token: TOKEN });
  await server.create('v1/configmaps', { metadata: { name: 'a', namespace: 'default' } });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  // A failed assertion may leave a plugin running: end what this test started (its scripts, and `sleep`s they named).
  for (const d of dirs.splice(0)) {
    const leftovers = processesRunning(d);
    for (const file of ['pid', 'child-pid']) {
      const pid = existsSync(join(d, file)) ? Number(readFileSync(join(d, file), 'utf8')) : NaN;
      if (Number.isInteger(pid) && pid > 0 && commandLine(pid) === 'sleep 1000') leftovers.push(pid);
    }
    for (const pid of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    rmSync(d, { recursive: true, force: true });
  }
});

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'rxkube-exec-'));
  dirs.push(d);
  return d;
}

/** A node script in a fresh temp dir; `pidFile` gets the pid of the process (and of its child, for the shell one). */
function plugin(body: string): { command: string; args: string[]; path: string; pidFile: string; runsFile: string } {
  const dir = tempDir();
  const path = join(dir, `plugin-${++scripts}.mjs`);
  const pidFile = join(dir, 'pid');
  const runsFile = join(dir, 'runs');
  const prelude = [
    "import { appendFileSync, writeFileSync } from 'node:fs';",
    `writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));`,
    `appendFileSync(${JSON.stringify(runsFile)}, 'run\\n');`,
  ];
  writeFileSync(path, [...prelude, body, ''].join('\n'));
  return { command: process.execPath, args: [path], path, pidFile, runsFile };
}

const credential = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: TOKEN, ...extra } });

/** Prints a token-like line on both streams, then never answers. */
const HANGS = `process.stdout.write(${JSON.stringify(LEAK)}); process.stderr.write(${JSON.stringify(LEAK)}); setInterval(() => {}, 1_000);`;

function kubeConfig(exec: { command: string; args: string[] }, extra: Record<string, unknown> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sim', server: server.url, skipTLSVerify: false }],
    users: [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never', ...exec, ...extra } }],
    contexts: [{ name: 'sim', cluster: 'sim', user: 'u' }],
    currentContext: 'sim',
  });
  return kc;
}

/**
 * Whether `pid` is a live process. A killed grandchild (the shell plugin's `sleep`) stays a zombie until
 * whoever adopted it reaps it, and `kill(pid, 0)` still finds a zombie, so /proc's state decides where it exists.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return existsSync('/proc/self') ? false : true;
  }
}

/** Processes whose command line names `path` (Linux's /proc): found even when one was killed before it wrote its pid. */
function processesRunning(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path) && alive(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}

async function pidOf(file: string): Promise<number> {
  return waitFor(() => (existsSync(file) && readFileSync(file, 'utf8') !== '' ? Number(readFileSync(file, 'utf8')) : undefined), 'the plugin to start');
}

function text(err: unknown): string {
  return `${String(err)} ${JSON.stringify(err)} ${(err as Error).stack ?? ''} ${String((err as Error).cause)}`;
}

describe('an exec credential plugin that hangs', () => {
  it('an informer reports a typed CREDENTIALS error on errors$ and status$, retries with backoff, and the plugin is gone after unsubscribe', async () => {
    const p = plugin(HANGS);
    const kc = withTransport(kubeConfig(p), { credentialTimeoutMs: 200 });
    const inf = informer(kubeSource(kc, 'v1/configmaps'), { reflector: { backoff: { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 } } });
    const errors: unknown[] = [];
    const backoffs: unknown[] = [];
    inf.errors$.subscribe((e) => errors.push(e));
    inf.status$.subscribe((s) => {
      if (s.reflector?.state === 'backoff') backoffs.push(s.reflector.error);
    });
    const sub = inf.subscribe();
    try {
      await waitFor(() => errors.length >= 2 && backoffs.length >= 2, 'two credential failures, each followed by a backoff');
      for (const err of [...errors, ...backoffs]) {
        expect(err).toBeInstanceOf(ConnectionError);
        expect((err as ConnectionError).code).toBe('CREDENTIALS');
        expect((err as Error).message).toMatch(/no credential within 200 ms/);
        expect(text(err)).not.toContain(LEAK);
      }
    } finally {
      sub.unsubscribe();
    }
    await waitFor(() => processesRunning(p.path).length === 0, 'no plugin process left after unsubscribe');
    expect(execRunsInProgress()).toBe(0);
  });

  it('unsubscribing while the plugin runs (long before its timeout) kills it', async () => {
    const p = plugin(HANGS);
    const inf = informer(kubeSource(kubeConfig(p), 'v1/configmaps'));
    const states: string[] = [];
    inf.status$.subscribe((s) => {
      if (s.reflector !== undefined) states.push(s.reflector.state);
    });
    const sub = inf.subscribe();
    try {
      const pid = await pidOf(p.pidFile);
      expect(alive(pid)).toBe(true);
      expect(new Set(states)).toEqual(new Set(['listing']));
      expect(inf.status().errors).toBe(0);
      // A request still resolving credentials keeps idle pools open (P-10): a read with a plain token leaves one.
      await objectClient(server.kubeConfig(), 'v1/configmaps', { namespace: 'default' }).get('a');
    } finally {
      sub.unsubscribe();
    }
    await waitFor(() => processesRunning(p.path).length === 0, 'the plugin process to be gone after unsubscribe');
    // The abandoned resolution no longer counts, so that pool closes too.
    await waitFor(() => pools.size === 0, 'every pool to close');
  });

  it("objectClient's timeoutMs covers the wait for credentials: a typed CREDENTIALS error, and the plugin killed", async () => {
    const p = plugin(HANGS);
    const cms = objectClient(kubeConfig(p), 'v1/configmaps', { namespace: 'default', timeoutMs: 300 });
    const err = await cms.get('a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe('CREDENTIALS');
    expect((err as Error).message).toMatch(/get .*could not obtain credentials.*abandoned: the request was cancelled or ran out of time/);
    expect(text(err)).not.toContain(LEAK);
    await waitFor(() => processesRunning(p.path).length === 0, 'the plugin process to be gone after the timeout');
  });

  it("a caller's abort ends the call with the signal's reason and kills the plugin", async () => {
    const p = plugin(HANGS);
    const cms = objectClient(kubeConfig(p), 'v1/configmaps', { namespace: 'default' });
    const controller = new AbortController();
    const call = cms.get('a', { signal: controller.signal }).catch((e: unknown) => e);
    const pid = await pidOf(p.pidFile);
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await call).toBe(reason);
    await waitFor(() => !alive(pid), 'the plugin process to be gone after the abort');
  });

  it('a shell plugin is killed with what it started', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'pid');
    const path = join(dir, 'plugin.sh');
    writeFileSync(path, ['#!/bin/sh', 'sleep 1000 &', `echo $! > '${pidFile}'`, 'wait', ''].join('\n'));
    chmodSync(path, 0o755);
    const controller = new AbortController();
    const call = objectClient(kubeConfig({ command: path, args: [] }), 'v1/configmaps', { namespace: 'default' })
      .get('a', { signal: controller.signal })
      .catch((e: unknown) => e);
    const sleeper = await pidOf(pidFile);
    controller.abort();
    expect(await call).toBeInstanceOf(DOMException);
    await waitFor(() => !alive(sleeper), "the plugin's child to be gone");
  });

  it('a plugin that exited but left a child holding its output open: the child is killed once nobody waits', async () => {
    const dir = tempDir();
    const [shPid, childPid] = [join(dir, 'sh-pid'), join(dir, 'child-pid')];
    const path = join(dir, 'plugin.sh');
    writeFileSync(path, ['#!/bin/sh', 'sleep 1000 &', `echo $! > '${childPid}'`, `echo $$ > '${shPid}'`, 'exit 0', ''].join('\n'));
    chmodSync(path, 0o755);
    const controller = new AbortController();
    const call = objectClient(kubeConfig({ command: path, args: [] }), 'v1/configmaps', { namespace: 'default' })
      .get('a', { signal: controller.signal })
      .catch((e: unknown) => e);
    const sleeper = await pidOf(childPid);
    const leader = await pidOf(shPid);
    // The plugin itself has exited, and node has reaped it (a zombie still answers kill 0), before anyone lets go.
    await waitFor(() => {
      try {
        process.kill(leader, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the plugin itself to exit and be reaped');
    controller.abort();
    expect(await call).toBeInstanceOf(DOMException);
    await waitFor(() => !alive(sleeper), "the plugin's child to be gone");
  });

  it('a process that exits while its plugin runs takes the plugin with it', async () => {
    const p = plugin(HANGS);
    const entry = JSON.stringify(new URL('../../dist/index.js', import.meta.url).href);
    const script = `
      import { existsSync } from 'node:fs';
      import { KubeConfig } from '@kubernetes/client-node';
      import { objectClient } from ${entry};
      const kc = new KubeConfig();
      kc.loadFromOptions(${JSON.stringify({
        clusters: [{ name: 'sim', server: server.url, skipTLSVerify: false }],
        users: [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: p.command, args: p.args, interactiveMode: 'Never' } }],
        contexts: [{ name: 'sim', cluster: 'sim', user: 'u' }],
        currentContext: 'sim',
      })});
      objectClient(kc, 'v1/configmaps', { namespace: 'default' }).get('a').catch(() => undefined);
      const poll = setInterval(() => { if (existsSync(${JSON.stringify(p.pidFile)})) { clearInterval(poll); process.exit(0); } }, 5);
    `;
    const run = await runNode(['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)), timeoutMs: 20_000 });
    expect(run.code).toBe(0);
    const pid = await pidOf(p.pidFile);
    await waitFor(() => !alive(pid), 'the plugin process to be gone once its parent exited');
  });
});

describe('exec credentials run by rxkube', () => {
  it('are used, cached until expirationTimestamp, and one run serves concurrent requests', async () => {
    const p = plugin(`process.stdout.write(${JSON.stringify(credential({ expirationTimestamp: new Date(Date.now() + 3_600_000).toISOString() }))});`);
    const cms = objectClient(kubeConfig(p), 'v1/configmaps', { namespace: 'default' });
    const got = await Promise.all([1, 2, 3, 4, 5].map(() => cms.get('a')));
    expect(got.map((c) => c.metadata?.name)).toEqual(['a', 'a', 'a', 'a', 'a']);
    await cms.get('a');
    expect(readFileSync(p.runsFile, 'utf8')).toBe('run\n');
  });

  it('are asked for again once expired', async () => {
    const p = plugin(`process.stdout.write(${JSON.stringify(credential({ expirationTimestamp: '2000-01-01T00:00:00Z' }))});`);
    const cms = objectClient(kubeConfig(p), 'v1/configmaps', { namespace: 'default' });
    await cms.get('a');
    await cms.get('a');
    expect(readFileSync(p.runsFile, 'utf8')).toBe('run\nrun\n');
  });

  it('tell the plugin about the request in KUBERNETES_EXEC_INFO, with the cluster when asked', async () => {
    const p = plugin(`writeFileSync(process.argv[2], process.env.KUBERNETES_EXEC_INFO ?? ''); process.stdout.write(${JSON.stringify(credential())});`);
    const infoFile = join(dirs.at(-1) ?? '', 'info');
    const cms = objectClient(kubeConfig({ command: p.command, args: [...p.args, infoFile] }, { provideClusterInfo: true }), 'v1/configmaps', { namespace: 'default' });
    await cms.get('a');
    expect(JSON.parse(readFileSync(infoFile, 'utf8'))).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false, cluster: { server: server.url } },
    });
  });

  it('refuse output past the bound, a wrong kind and a failed exit, typed and without what the plugin printed', async () => {
    const cases: [string, RegExp][] = [
      [`process.stdout.write(${JSON.stringify(LEAK)}.repeat(60_000)); setInterval(() => {}, 1_000);`, /printed more than 1048576 bytes/],
      [`process.stdout.write(JSON.stringify({ kind: 'Secret', token: ${JSON.stringify(LEAK)} }));`, /not an ExecCredential/],
      [`process.stdout.write(${JSON.stringify(LEAK)});`, /no valid ExecCredential JSON/],
      [`process.stderr.write(${JSON.stringify(LEAK)}); process.exit(3);`, /exited with code 3/],
    ];
    for (const [body, message] of cases) {
      const p = plugin(body);
      const err = await objectClient(kubeConfig(p), 'v1/configmaps', { namespace: 'default' })
        .get('a')
        .catch((e: unknown) => e);
      expect((err as ConnectionError).code).toBe('CREDENTIALS');
      expect((err as Error).message).toMatch(message);
      expect(text(err)).not.toContain(LEAK);
      const pid = await pidOf(p.pidFile);
      await waitFor(() => !alive(pid), 'the plugin process to be gone');
    }
  });

  it('refuse a command that cannot start and a plugin that needs a terminal, typed, before anything waits', async () => {
    const missing = await objectClient(kubeConfig({ command: join(tempDir(), 'no-such-plugin'), args: [] }), 'v1/configmaps', { namespace: 'default' })
      .get('a')
      .catch((e: unknown) => e);
    expect((missing as ConnectionError).code).toBe('CREDENTIALS');
    expect((missing as Error).message).toMatch(/the exec plugin could not be started \(ENOENT\)/);
    const p = plugin(`process.stdout.write(${JSON.stringify(credential())});`);
    const interactive = await objectClient(kubeConfig(p, { interactiveMode: 'Always' }), 'v1/configmaps', { namespace: 'default' })
      .get('a')
      .catch((e: unknown) => e);
    expect((interactive as ConnectionError).code).toBe('CREDENTIALS');
    expect((interactive as Error).message).toMatch(/needs a terminal/);
    expect(existsSync(p.runsFile)).toBe(false);
  });
});
