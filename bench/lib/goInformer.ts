// Go's client-go informer (bench/go/informer) for the benchmarks: built from Go
// modules through the module proxy, as spec/e2e/build.sh builds kube-apiserver,
// into a cache outside the clone; and a driver that speaks its line protocol
// (JSON lines on stdout, commands on stdin).

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The Go module's directory: beside this file in bench/lib when run from source, or from build/bench/lib. */
function sourceDir(): string {
  for (const rel of ['../go/informer/', '../../../bench/go/informer/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, 'go.mod'))) return dir;
  }
  throw new Error('bench/go/informer not found beside bench/lib or build/bench/lib');
}

function cacheHome(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
}

/** The go command: GO, else `go` on PATH, else /usr/local/go/bin/go (spec/e2e/build.sh's order). */
function goCommand(): string {
  const fromEnv = process.env.GO;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  try {
    return execFileSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).trim();
  } catch {
    if (existsSync('/usr/local/go/bin/go')) return '/usr/local/go/bin/go';
    throw new Error('no go toolchain found: install Go or set GO=/path/to/go');
  }
}

/** The version of k8s.io/client-go the module requires. */
function clientGoVersion(goMod: string): string {
  const m = /^\s*(?:require\s+)?k8s\.io\/client-go\s+(v\S+)/m.exec(goMod);
  if (m?.[1] === undefined) throw new Error('bench/go/informer/go.mod requires no k8s.io/client-go');
  return m[1];
}

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [...args], { cwd, env, stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-8000)));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr}`))));
  });
}

/**
 * Builds bench/go/informer (client-go as its go.mod pins it) unless already
 * built, and returns the binary's path:
 * `${RXKUBE_BENCH_CACHE:-$XDG_CACHE_HOME/rxkube-bench}/go-informer-<client-go version>-<hash of the sources>/informer`.
 * The Go module and build caches are the e2e tier's (`RXKUBE_E2E_CACHE`, as
 * spec/e2e/build.sh sets them), so nothing is downloaded twice; go.sum is
 * committed and the build is `-mod=readonly`, so a missing checksum fails
 * rather than fetches.
 */
export async function goInformerBinary(log: (s: string) => void = () => {}): Promise<string> {
  const dir = sourceDir();
  const goMod = readFileSync(join(dir, 'go.mod'), 'utf8');
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    if (name === 'go.mod' || name === 'go.sum' || name.endsWith('.go')) hash.update(name).update('\0').update(readFileSync(join(dir, name))).update('\0');
  }
  const root = process.env.RXKUBE_BENCH_CACHE || join(cacheHome(), 'rxkube-bench');
  const out = join(root, `go-informer-${clientGoVersion(goMod)}-${hash.digest('hex').slice(0, 12)}`, 'informer');
  if (existsSync(out)) return out;
  const e2e = process.env.RXKUBE_E2E_CACHE || join(cacheHome(), 'rxkube-e2e');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GOPATH: join(e2e, 'go'),
    GOMODCACHE: join(e2e, 'go', 'pkg', 'mod'),
    GOCACHE: join(e2e, 'go-build'),
    GOTOOLCHAIN: 'local',
    CGO_ENABLED: '0',
    GOFLAGS: '-mod=readonly -buildvcs=false -modcacherw',
  };
  mkdirSync(join(out, '..'), { recursive: true });
  // Built beside its final path and renamed, so a half-written binary is never there (two runs may build at once).
  const tmp = `${out}.tmp.${process.pid}`;
  log(`building the client-go informer into ${out} (the first build downloads client-go and takes a minute or two)`);
  const t0 = performance.now();
  try {
    await run('nice', ['-n', '10', goCommand(), 'build', '-p', '2', '-trimpath', '-ldflags', '-s -w', '-o', tmp, '.'], dir, env);
    renameSync(tmp, out);
  } finally {
    rmSync(tmp, { force: true });
  }
  log(`built the client-go informer in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return out;
}

/** `{"event":"synced"}`: start → synced, and the CPU the process had spent by then. */
export interface GoSynced {
  readonly event: 'synced';
  readonly syncMs: number;
  readonly cpuMs: number;
  readonly objects: number;
}

/** `{"event":"memory"}`, after runtime.GC(). */
export interface GoMemory {
  readonly event: 'memory';
  readonly rssBytes: number;
  readonly heapInuseBytes: number;
  readonly heapAllocBytes: number;
  readonly sysBytes: number;
  readonly objects: number;
  /** HeapInuse after a GC before the informer was made: the program with client-go loaded and nothing cached. */
  readonly heapInuseAtStartBytes: number;
}

/** `{"event":"reached"}`: from the `wait` command's receipt until the object was there at that version. */
export interface GoReached {
  readonly event: 'reached';
  readonly ms: number;
  readonly cpuMs: number;
}

/** The program's command-line options (see bench/go/informer/main.go). */
export interface GoInformerOptions {
  readonly kubeconfig: string;
  readonly protobuf?: boolean;
  readonly watchList?: boolean;
  readonly stripManagedFields?: boolean;
  /** @default 1 */
  readonly handlers?: number;
  /** Objects the initial list holds. */
  readonly expect?: number;
}

/** One running informer program, spoken to line by line. */
export class GoInformer {
  readonly process: ChildProcess;
  #lines: string[] = [];
  #waiters: ((line: string | undefined) => void)[] = [];
  #ended = false;
  #stderr = '';

  /**
   * @param binary From {@link goInformerBinary}.
   * @param options Its flags.
   */
  constructor(binary: string, options: GoInformerOptions) {
    const args = ['--kubeconfig', options.kubeconfig, '--handlers', String(options.handlers ?? 1)];
    if (options.expect !== undefined) args.push('--expect', String(options.expect));
    if (options.protobuf === true) args.push('--protobuf');
    if (options.watchList === true) args.push('--watch-list');
    if (options.stripManagedFields === true) args.push('--strip-managed-fields');
    this.process = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    // A program that failed to start, or exited, ends every wait with its stderr; a command sent after it
    // exited is lost rather than thrown from the pipe.
    this.process.on('error', (err) => {
      this.#stderr += `${err.message}\n`;
      this.#end();
    });
    this.process.stdin?.on('error', () => {});
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (d: string) => (this.#stderr = (this.#stderr + d).slice(-4000)));
    const rl = createInterface({ input: this.process.stdout as NodeJS.ReadableStream });
    rl.on('line', (line) => {
      const w = this.#waiters.shift();
      if (w) w(line);
      else this.#lines.push(line);
    });
    rl.on('close', () => this.#end());
  }

  #end(): void {
    this.#ended = true;
    for (const w of this.#waiters.splice(0)) w(undefined);
  }

  /** The next line as the event it names; an `error` line, the end of output or `timeoutMs` reject. */
  async next<T extends { readonly event: string }>(event: T['event'], timeoutMs: number): Promise<T> {
    const line = await new Promise<string | undefined>((resolve, reject) => {
      const queued = this.#lines.shift();
      if (queued !== undefined || this.#ended) {
        resolve(queued);
        return;
      }
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`client-go informer: no ${event} within ${timeoutMs} ms; stderr: ${this.#stderr}`));
      }, timeoutMs);
      const waiter = (l: string | undefined): void => {
        clearTimeout(timer);
        resolve(l);
      };
      this.#waiters.push(waiter);
    });
    if (line === undefined) throw new Error(`client-go informer exited before ${event}; stderr: ${this.#stderr}`);
    const msg = JSON.parse(line) as { event: string; message?: string };
    if (msg.event === 'error') throw new Error(`client-go informer: ${msg.message}`);
    if (msg.event !== event) throw new Error(`client-go informer: expected ${event}, got ${line}`);
    return msg as unknown as T;
  }

  /** Sends one command line. */
  send(command: string): void {
    this.process.stdin?.write(`${command}\n`);
  }

  /** Sends `memory` and returns the figures after runtime.GC(). */
  async memory(timeoutMs = 60_000): Promise<GoMemory> {
    this.send('memory');
    return this.next<GoMemory>('memory', timeoutMs);
  }

  /** Sends `wait key rv` and returns when the program reports the object there at that version. */
  async wait(key: string, resourceVersion: string | number, timeoutMs: number): Promise<GoReached> {
    this.send(`wait ${key} ${resourceVersion}`);
    return this.next<GoReached>('reached', timeoutMs);
  }

  /** Sends `exit`; kills the process if it is still there after `graceMs`. */
  async close(graceMs = 5_000): Promise<void> {
    if (this.process.pid === undefined || this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.send('exit');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
