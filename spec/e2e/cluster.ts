/**
 * The integration tier's control plane: a real etcd and a real kube-apiserver, built by
 * `spec/e2e/build.sh` from their Go modules, started on 127.0.0.1 with throw-away state and torn
 * down completely afterwards — the same job envtest does for Go controllers.
 *
 * Everything a test needs to break the cluster on purpose lives here too: kill and restart the
 * API server on the same port, compact etcd, and a TCP proxy that can cut every connection a
 * client holds (so a watch falls behind a compaction without the server going away).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { stablePorts } from '../../src/testing/server/listener.js';
import { startTcpProxy } from '../helpers/tcpProxy.js';
import { waitFor } from '../helpers/waitFor.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/** A user of the static token file. */
export interface ClusterUser {
  readonly name: string;
  readonly groups?: readonly string[];
}

/** How to start a cluster. */
export interface ClusterOptions {
  /**
   * kube-apiserver's `--authorization-mode`.
   * @default 'AlwaysAllow'
   */
  readonly authorization?: 'AlwaysAllow' | 'RBAC';
  /**
   * Resources (`resource[.group]`) served without a watch cache, so a watch on them reads etcd
   * directly and a compacted resourceVersion answers 410 at once (the watch cache otherwise keeps
   * recent history past an etcd compaction).
   * @default []
   */
  readonly withoutWatchCache?: readonly string[];
  /**
   * Extra token users besides `admin` (which is in `system:masters`).
   * @default []
   */
  readonly users?: readonly ClusterUser[];
  /**
   * kube-apiserver `--feature-gates`, e.g. `{ WatchList: false }` to behave like a server older than 1.32.
   * @default {}
   */
  readonly featureGates?: Readonly<Record<string, boolean>>;
  /**
   * Admission plugins to turn on beside kube-apiserver's defaults (`--enable-admission-plugins`), e.g.
   * `['OwnerReferencesPermissionEnforcement']`, which hardened clusters run and the defaults leave off.
   * @default []
   */
  readonly admissionPlugins?: readonly string[];
  /**
   * Keep the API server's audit log (every request at the Metadata level: who, verb, resource, response
   * code), for `Cluster.auditEvents()`.
   * @default false
   */
  readonly auditLog?: boolean;
  /**
   * kube-apiserver's `--enable-aggregator-routing`: it reaches a Service a webhook's (or an aggregated API's)
   * `service` client config names at an address of the Service's Endpoints instead of its ClusterIP, which nothing
   * routes here (no kube-proxy). A test then points the Service at a webhook server with Endpoints it writes.
   * @default false
   */
  readonly aggregatorRouting?: boolean;
  /**
   * How long to wait for etcd and kube-apiserver to become ready, in ms.
   * @default 120_000
   */
  readonly readyTimeoutMs?: number;
}

/** One request as the API server's audit log has it (the fields a test reads). */
export interface AuditEvent {
  /** `ResponseStarted` (a watch, once it is served) or `ResponseComplete`. */
  readonly stage: string;
  /** The authorizer's verb: get, list, watch, create, patch, update, delete, ... */
  readonly verb: string;
  readonly user: { readonly username: string; readonly groups?: readonly string[] };
  /** Absent for a non-resource request (discovery, /version). */
  readonly objectRef?: { readonly apiGroup?: string; readonly resource?: string; readonly subresource?: string; readonly namespace?: string; readonly name?: string };
  readonly responseStatus?: { readonly code?: number };
}

/** A TCP proxy in front of the API server whose connections a test can cut. */
export interface CuttableProxy {
  /** A KubeConfig for `user` that talks through the proxy. */
  kubeConfig(user?: string): KubeConfig;
  /** Destroys every open connection and refuses (resets) new ones until `heal()`. */
  cut(): void;
  /** Lets connections through again. */
  heal(): void;
  /** Connections accepted so far, counting refused ones. */
  readonly accepted: number;
  close(): Promise<void>;
}

/** A running etcd + kube-apiserver. */
export interface Cluster {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** The admin KubeConfig (token user `admin`, group `system:masters`). */
  readonly kubeConfig: KubeConfig;
  /** The cluster CA's directory: `ca.crt` and `ca.key`, which also sign client certificates the server accepts. */
  readonly pkiDir: string;
  /** Where the admin kubeconfig was written. */
  readonly kubeconfigPath: string;
  /** A KubeConfig for one of the token users (`admin` or one given in `users`). */
  kubeConfigFor(user: string): KubeConfig;
  /** Kills the API server's process group (SIGKILL: no graceful drain) and waits for it to exit. */
  killApiServer(): Promise<void>;
  /** Starts the API server again on the same port and waits for /readyz. */
  startApiServer(): Promise<void>;
  /** etcd's current revision (the API server's resourceVersion space). */
  etcdRevision(): Promise<number>;
  /** Compacts etcd at its current revision; returns that revision. */
  compactEtcd(): Promise<number>;
  /**
   * The value etcd holds at `key` (e.g. `/registry/example.com/websites/<ns>/<name>`: custom resources are stored as
   * JSON, in the CRD's storage version), or undefined when there is none: what the API server really stored.
   */
  etcdValue(key: string): Promise<string | undefined>;
  /** Starts a cuttable TCP proxy in front of the API server. */
  startProxy(): Promise<CuttableProxy>;
  /** Every request the audit log holds so far (the cluster must be started with `auditLog: true`). */
  auditEvents(): Promise<AuditEvent[]>;
  /** Stops everything and removes the temp dir; safe to call twice. */
  stop(): Promise<void>;
}

interface Binaries {
  readonly kubeApiServer: string;
  readonly etcd: string;
}

/** Finds the binaries build.sh made (or the ones named by RXKUBE_E2E_KUBE_APISERVER / RXKUBE_E2E_ETCD). */
export async function binaries(): Promise<Binaries> {
  const fromEnv = { kubeApiServer: process.env['RXKUBE_E2E_KUBE_APISERVER'], etcd: process.env['RXKUBE_E2E_ETCD'] };
  let kubeApiServer = fromEnv.kubeApiServer;
  let etcd = fromEnv.etcd;
  if (kubeApiServer === undefined || etcd === undefined) {
    // build.sh is the one place that knows where binaries live; it exits 1 with the paths when one is missing.
    const { stdout } = await run('bash', [join(here, 'build.sh'), '--paths']).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    const paths = Object.fromEntries(stdout.trim().split('\n').map((l) => l.split('=', 2) as [string, string]));
    kubeApiServer ??= paths['KUBE_APISERVER'];
    etcd ??= paths['ETCD'];
  }
  for (const [name, path] of [['kube-apiserver', kubeApiServer], ['etcd', etcd]] as const) {
    if (path === undefined || !existsSync(path)) {
      throw new Error(`e2e: no ${name} binary at ${String(path)}; build it first with: bash spec/e2e/build.sh`);
    }
  }
  return { kubeApiServer: kubeApiServer!, etcd: etcd! };
}

/** A port that was free a moment ago on 127.0.0.1 (the process that binds it may still lose a race; start retries). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('e2e: no port');
  return address.port;
}

/** Whether listening on 127.0.0.1:`port` works now. */
async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) {
    server.close();
    await once(server, 'close');
  }
  return listening;
}

/**
 * A port for the API server that was free a moment ago, picked as the simulator picks its own: below the range the
 * OS gives outgoing connections, so none can take it while a restart, which must use the same port, has the server
 * down. Any free port where that range is unknown.
 */
async function stablePort(): Promise<number> {
  for (const port of stablePorts()) if (await isFree(port)) return port;
  return freePort();
}

/**
 * Waits until `probe` answers true, taking its errors as "not ready yet"; fails at once if `proc` exits, else
 * with the probe's last error after `timeoutMs`.
 */
async function ready(proc: Proc, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  let last: unknown;
  const answered = async (): Promise<boolean> => {
    if (proc.exitReason !== undefined) throw new Error(`e2e: ${proc.name} exited before it was ready: ${proc.exitReason}`);
    try {
      return await probe();
    } catch (e) {
      last = e;
      return false;
    }
  };
  await waitFor(answered, `${proc.name} to be ready`, timeoutMs, { everyMs: 250, describe: () => `last: ${String(last)}` });
}

/** One child process in its own process group, so killing it also kills anything it started. */
class Proc {
  readonly name: string;
  /** Set once the process has exited, with why; read by readiness probes to stop waiting early. */
  exitReason: string | undefined;
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  /** The log file, whose tail explains a failed start. */
  readonly #logPath: string;

  constructor(name: string, bin: string, args: readonly string[], logPath: string) {
    this.name = name;
    this.#logPath = logPath;
    const log = createWriteStream(logPath, { flags: 'a' });
    this.#child = spawn(bin, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child.stdout?.pipe(log, { end: false });
    this.#child.stderr?.pipe(log, { end: false });
    this.#exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        this.exitReason = `code ${String(code)}, signal ${String(signal)}`;
        log.end();
        live.delete(this);
        resolve();
      });
      this.#child.once('error', (e) => {
        this.exitReason = String(e);
        log.end();
        live.delete(this);
        resolve();
      });
    });
    live.add(this);
  }

  /** SIGKILLs the whole process group and waits for the process to be gone. */
  async kill(): Promise<void> {
    if (this.exitReason === undefined) this.killNow();
    await this.#exited;
  }

  /** Synchronous kill for the process-exit hook. */
  killNow(): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  async logTail(lines = 40): Promise<string> {
    const text = await readFile(this.#logPath, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  }
}

/** Every process still running, so a crashing or killed test worker does not leave servers behind. */
const live = new Set<Proc>();
/** Temp dirs of clusters not yet stopped, removed with them. */
const liveDirs = new Set<string>();
const killAll = (): void => {
  for (const p of live) p.killNow();
  for (const d of liveDirs) rmSync(d, { recursive: true, force: true, maxRetries: 3 });
};
process.once('exit', killAll);
// 'exit' does not fire when a signal ends the process: clean up, then die of the same signal as before.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

/** A JSON request to etcd's HTTP gateway. */
async function etcdCall(clientUrl: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${clientUrl}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`e2e: etcd ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** GET over TLS trusting only the cluster CA; resolves with the status code. */
function httpsGetStatus(url: string, ca: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  await run('openssl', [...args], { cwd });
}

/** A CA and a serving certificate for 127.0.0.1 / localhost, made with openssl. */
async function makeServingCert(dir: string): Promise<{ caPem: string; certPath: string; keyPath: string }> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=rxkube-e2e-ca',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  await openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver'], dir);
  await writeFile(join(dir, 'server.ext'), [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '',
  ].join('\n'));
  await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'server.crt', '-days', '2', '-extfile', 'server.ext'], dir);
  return { caPem: await readFile(join(dir, 'ca.crt'), 'utf8'), certPath: join(dir, 'server.crt'), keyPath: join(dir, 'server.key') };
}

/** Builds a token-authenticated KubeConfig for `server`. */
function tokenKubeConfig(server: string, caPem: string, user: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'e2e', server, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false }],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: 'e2e', user }],
    currentContext: user,
  });
  return kc;
}

/**
 * Starts etcd and kube-apiserver on loopback and waits until the API server's /readyz is ok.
 * On any failure everything already started is torn down before the error is thrown.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const authorization = opts.authorization ?? 'AlwaysAllow';
  if (authorization !== 'AlwaysAllow' && authorization !== 'RBAC') {
    throw new TypeError(`startCluster: authorization must be 'AlwaysAllow' or 'RBAC', got ${String(authorization)}`);
  }
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  if (!Number.isFinite(readyTimeoutMs) || readyTimeoutMs <= 0) {
    throw new TypeError(`startCluster: readyTimeoutMs must be a positive number, got ${String(readyTimeoutMs)}`);
  }
  for (const u of opts.users ?? []) {
    // The name lands in a CSV token file and in RBAC subjects.
    if (typeof u?.name !== 'string' || !/^[a-z0-9][a-z0-9:._-]*$/i.test(u.name) || u.name === 'admin') {
      throw new TypeError(`startCluster: users[].name must be a plain user name other than 'admin', got ${JSON.stringify(u?.name)}`);
    }
  }
  for (const r of opts.withoutWatchCache ?? []) {
    if (typeof r !== 'string' || !/^[a-z0-9]+(\.[a-z0-9.-]+)?$/.test(r)) {
      throw new TypeError(`startCluster: withoutWatchCache entries must be 'resource' or 'resource.group', got ${JSON.stringify(r)}`);
    }
  }
  const gates = Object.entries(opts.featureGates ?? {}).map(([name, on]) => {
    if (!/^[A-Za-z0-9]+$/.test(name) || typeof on !== 'boolean') {
      throw new TypeError(`startCluster: featureGates must map gate names to booleans, got ${JSON.stringify([name, on])}`);
    }
    return `${name}=${String(on)}`;
  });
  for (const p of opts.admissionPlugins ?? []) {
    if (typeof p !== 'string' || !/^[A-Za-z]+$/.test(p)) {
      throw new TypeError(`startCluster: admissionPlugins entries must be plugin names such as 'OwnerReferencesPermissionEnforcement', got ${JSON.stringify(p)}`);
    }
  }
  const bins = await binaries();
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-e2e-'));
  if (process.env['RXKUBE_E2E_KEEP'] === undefined) liveDirs.add(dir);
  const procs: { etcd?: Proc; api?: Proc } = {};
  const proxies = new Set<CuttableProxy>();
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all([...proxies].map((p) => p.close()));
    await procs.api?.kill();
    await procs.etcd?.kill();
    // Kept on request, so a failing run's logs can be read.
    if (process.env['RXKUBE_E2E_KEEP'] === undefined) await rm(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };

  try {
    // etcd: a single member, no fsync (the data is thrown away), compaction only when a test asks.
    const etcdDir = join(dir, 'etcd');
    let etcdUrl = '';
    for (let attempt = 1; ; attempt++) {
      const [clientPort, peerPort] = [await freePort(), await freePort()];
      etcdUrl = `http://127.0.0.1:${clientPort}`;
      const peerUrl = `http://127.0.0.1:${peerPort}`;
      procs.etcd = new Proc('etcd', bins.etcd, [
        '--name=e2e', `--data-dir=${etcdDir}`,
        `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=e2e=${peerUrl}`,
        '--unsafe-no-fsync', '--log-level=warn',
        // The watch cache learns that the store moved on (and so can send bookmarks to a quiet resource's
        // watchers) only from etcd's progress notifications; clusters set this to seconds, etcd defaults to 10 m.
        '--watch-progress-notify-interval=1s',
      ], join(dir, 'etcd.log'));
      const etcdProc = procs.etcd;
      try {
        await ready(etcdProc, async () => (await fetch(`${etcdUrl}/health`)).ok, readyTimeoutMs);
        break;
      } catch (e) {
        // Another process may have taken a port between freePort() and etcd's bind: try fresh ones.
        if (attempt >= 3 || etcdProc.exitReason === undefined) throw new Error(`${message(e)}\n${await etcdProc.logTail()}`);
        await rm(etcdDir, { recursive: true, force: true });
      }
    }

    const pki = join(dir, 'pki');
    await mkdir(pki);
    const { caPem, certPath, keyPath } = await makeServingCert(pki);
    const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(join(pki, 'sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await writeFile(join(pki, 'sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));

    const auditLogPath = join(dir, 'audit.log');
    if (opts.auditLog === true) {
      // Who did what and how it was answered; the RequestReceived stage only repeats what the others say.
      await writeFile(join(pki, 'audit-policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ["RequestReceived"]\nrules:\n  - level: Metadata\n');
    }

    const tokens = new Map<string, string>();
    const users: ClusterUser[] = [{ name: 'admin', groups: ['system:masters'] }, ...(opts.users ?? [])];
    const lines: string[] = [];
    for (const u of users) {
      const token = randomBytes(24).toString('hex');
      tokens.set(u.name, token);
      lines.push(`${token},${u.name},${u.name}-uid,"${(u.groups ?? []).join(',')}"`);
    }
    await writeFile(join(pki, 'tokens.csv'), `${lines.join('\n')}\n`);
    const adminToken = tokens.get('admin')!;

    let port = await stablePort();
    const apiArgs = (): string[] => [
      `--etcd-servers=${etcdUrl}`,
      // The server's own periodic compaction would make 410s happen at random; tests compact explicitly.
      '--etcd-compaction-interval=0',
      '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${port}`,
      `--tls-cert-file=${certPath}`, `--tls-private-key-file=${keyPath}`, `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      // Client certificates signed by the cluster CA authenticate too (CN the user, O the groups).
      `--client-ca-file=${join(pki, 'ca.crt')}`,
      `--authorization-mode=${authorization}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(pki, 'sa.pub')}`, `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      // No controller manager runs, so nothing would create service accounts for pods.
      '--disable-admission-plugins=ServiceAccount',
      ...(opts.admissionPlugins?.length ? [`--enable-admission-plugins=${opts.admissionPlugins.join(',')}`] : []),
      // A loopback advertise address is not a valid endpoint for the kubernetes service.
      '--endpoint-reconciler-type=none',
      '--allow-privileged=true', '--profiling=false',
      ...(opts.aggregatorRouting === true ? ['--enable-aggregator-routing=true'] : []),
      ...(gates.length ? [`--feature-gates=${gates.join(',')}`] : []),
      // Blocking mode: a request's event is written before its response, so the file is current when a test reads it.
      ...(opts.auditLog === true ? [`--audit-policy-file=${join(pki, 'audit-policy.yaml')}`, `--audit-log-path=${auditLogPath}`, '--audit-log-format=json', '--audit-log-mode=blocking'] : []),
      ...(opts.withoutWatchCache?.length ? [`--watch-cache-sizes=${opts.withoutWatchCache.map((r) => `${r}#0`).join(',')}`] : []),
    ];
    const readyz = async (): Promise<boolean> => (await httpsGetStatus(`https://127.0.0.1:${port}/readyz`, caPem, adminToken)) === 200;

    const startApi = async (retryPorts: boolean): Promise<void> => {
      for (let attempt = 1; ; attempt++) {
        const proc = new Proc('kube-apiserver', bins.kubeApiServer, apiArgs(), join(dir, 'kube-apiserver.log'));
        procs.api = proc;
        try {
          await ready(proc, readyz, readyTimeoutMs);
          return;
        } catch (e) {
          const tail = await proc.logTail();
          await proc.kill();
          if (!retryPorts || attempt >= 3 || !tail.includes('address already in use')) throw new Error(`${message(e)}\n${tail}`);
          port = await stablePort();
        }
      }
    };
    await startApi(true);

    const server = `https://127.0.0.1:${port}`;
    const kubeConfigFor = (user: string): KubeConfig => {
      const token = tokens.get(user);
      if (token === undefined) throw new TypeError(`kubeConfigFor: no user ${user}`);
      return tokenKubeConfig(server, caPem, user, token);
    };
    const kubeConfig = kubeConfigFor('admin');
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });

    const etcdRevision = async (): Promise<number> => {
      const res = await etcdCall(etcdUrl, '/v3/kv/range', { key: Buffer.from('\0').toString('base64') });
      return Number((res['header'] as { revision: string }).revision);
    };

    return {
      server,
      kubeConfig,
      pkiDir: pki,
      kubeconfigPath,
      kubeConfigFor,
      killApiServer: async () => {
        await procs.api?.kill();
      },
      startApiServer: async () => {
        if (procs.api?.exitReason === undefined) throw new Error('e2e: the API server is still running');
        await startApi(false);
      },
      etcdRevision,
      etcdValue: async (key) => {
        const res = await etcdCall(etcdUrl, '/v3/kv/range', { key: Buffer.from(key).toString('base64') });
        const value = (res['kvs'] as { value?: string }[] | undefined)?.[0]?.value;
        return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
      },
      compactEtcd: async () => {
        const revision = await etcdRevision();
        try {
          await etcdCall(etcdUrl, '/v3/kv/compaction', { revision: String(revision), physical: true });
        } catch (e) {
          // Nothing was written since the last compaction: the history is already gone, which is what was asked.
          if (!message(e).includes('required revision has been compacted')) throw e;
        }
        return revision;
      },
      startProxy: async () => {
        const proxy = await startProxy(port, (user) => {
          const token = tokens.get(user);
          if (token === undefined) throw new TypeError(`proxy.kubeConfig: no user ${user}`);
          return { caPem, token };
        });
        proxies.add(proxy);
        return proxy;
      },
      auditEvents: async () => {
        if (opts.auditLog !== true) throw new Error('e2e: auditEvents() needs startCluster({ auditLog: true })');
        const text = await readFile(auditLogPath, 'utf8').catch(() => '');
        // A line being written as this reads is not complete yet: only lines ended by a newline count.
        return text.split('\n').slice(0, -1).map((line) => JSON.parse(line) as AuditEvent);
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A TCP forwarder to 127.0.0.1:`target` (TLS passes through untouched), with kubeconfigs that use it. */
async function startProxy(target: number, credentials: (user: string) => { caPem: string; token: string }): Promise<CuttableProxy> {
  const proxy = await startTcpProxy(target);
  const url = `https://127.0.0.1:${proxy.port}`;
  return {
    kubeConfig: (user = 'admin') => {
      const { caPem, token } = credentials(user);
      return tokenKubeConfig(url, caPem, user, token);
    },
    cut: () => proxy.cut(),
    heal: () => proxy.heal(),
    get accepted() {
      return proxy.accepted;
    },
    close: () => proxy.close(),
  };
}
