// A newcomer's path to a custom-resource operator, timed as the README walks it: a fresh ESM project
// (`npm init`, `npm pkg set type=module`), `npm install` of this package (packed from this checkout) with
// rxjs, @kubernetes/client-node and zod, the README's `website.ts` saved as it is printed there, the
// simulator started on it (`rxkube simulator --crd ./website.ts --kubeconfig-out ./kubeconfig`), a Website
// applied, and the operator (`node website.ts`) run until the Website's status carries its Ready condition
// and its Deployment and Service exist. Each round starts from an empty directory; npm's cache is warm
// after the first round, so the first round is the one a first install looks like.
//
//   npm run bench -- newcomer
//   BENCH_REPEATS=5 npm run bench -- newcomer

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import { objectClient, type KubeObject } from 'rxkube';
import type { Benchmark, Context } from './lib/context.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The README's custom-resource module: the first ts block of its "Your own custom resources" section. */
export function readmeModule(readme: string): string {
  const section = readme.indexOf('\n## Your own custom resources');
  const open = readme.indexOf('\n```ts\n', section);
  const close = readme.indexOf('\n```\n', open + 1);
  if (section < 0 || open < 0 || close < 0) throw new Error('README.md: no ts block under "## Your own custom resources"');
  return readme.slice(open + '\n```ts\n'.length, close + 1);
}

/** Runs a command to its end in `cwd`; throws with its output when it fails. */
function run(cwd: string, command: string, args: readonly string[]): void {
  const res = spawnSync(command, args, { cwd, encoding: 'utf8', env: process.env });
  if (res.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${res.status}): ${res.stderr || res.stdout}`);
}

/** A child whose stdout is collected; resolves `ready` when a line matches. */
function start(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv, ready: RegExp): { child: ChildProcess; ready: Promise<void>; output: () => string } {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const seen = new Promise<void>((resolve, reject) => {
    const on = (d: Buffer): void => {
      output += d.toString();
      if (ready.test(output)) resolve();
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before it was ready: ${output}`)));
  });
  return { child, ready: seen, output: () => output };
}

/** Polls `check` every 20 ms until it holds, up to `limitMs`. */
async function until(what: string, check: () => Promise<boolean>, limitMs: number): Promise<void> {
  for (const deadline = Date.now() + limitMs; ; ) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Round {
  readonly installMs: number;
  readonly simulatorMs: number;
  readonly operatorMs: number;
  readonly totalMs: number;
}

async function round(tarball: string, module: string): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), 'rxkube-newcomer-'));
  const children: ChildProcess[] = [];
  try {
    const t0 = performance.now();
    run(dir, 'npm', ['init', '-y']);
    run(dir, 'npm', ['pkg', 'set', 'type=module']);
    run(dir, 'npm', ['install', '--no-audit', '--no-fund', tarball, 'rxjs', '@kubernetes/client-node', 'zod']);
    const t1 = performance.now();
    writeFileSync(join(dir, 'website.ts'), module);
    const sim = start(dir, ['node_modules/rxkube/dist/cli/main.js', 'simulator', '--crd', './website.ts', '--kubeconfig-out', './kubeconfig'], process.env, /ready at/);
    children.push(sim.child);
    await sim.ready;
    const t2 = performance.now();
    const kc = new KubeConfig();
    kc.loadFromFile(join(dir, 'kubeconfig'));
    const websites = objectClient(kc, { group: 'example.com', version: 'v1', plural: 'websites', namespaced: true }, { namespace: 'default', fieldManager: 'newcomer' });
    await websites.apply({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'blog' }, spec: { image: 'nginx:1.27' } } as never);
    const operator = start(dir, ['website.ts'], { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') }, /$^/);
    children.push(operator.child);
    operator.ready.catch(() => undefined);
    const deployments = objectClient(kc, 'apps/v1/deployments', { namespace: 'default' });
    const services = objectClient(kc, 'v1/services', { namespace: 'default' });
    await until(
      `the operator's first reconcile (its output: ${operator.output()})`,
      async () => {
        const w = (await websites.get('blog')) as KubeObject & { status?: { conditions?: { type: string }[] } };
        const ready = w.status?.conditions?.some((c) => c.type === 'Ready') === true;
        return ready && (await deployments.get('blog').then((d: V1Deployment) => d !== undefined)) && (await services.get('blog').then((s: V1Service) => s !== undefined));
      },
      60_000,
    );
    const t3 = performance.now();
    return { installMs: t1 - t0, simulatorMs: t2 - t1, operatorMs: t3 - t2, totalMs: t3 - t0 };
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((resolve) => c.once('exit', resolve)))));
    rmSync(dir, { recursive: true, force: true });
  }
}

export const newcomer: Benchmark = {
  name: 'newcomer',
  description: "a newcomer's path from npm init to a custom-resource operator reconciling on the simulator, as the README walks it",
  async run(ctx: Context): Promise<Row[]> {
    const packDir = mkdtempSync(join(tmpdir(), 'rxkube-pack-'));
    try {
      const packed = spawnSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], { cwd: ROOT, encoding: 'utf8' });
      if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
      const tarball = join(packDir, packed.stdout.trim().split('\n').pop() ?? '');
      const module = readmeModule(readFileSync(join(ROOT, 'README.md'), 'utf8'));
      const rounds: Round[] = [];
      for (let r = 0; r < ctx.repeats; r++) {
        const one = await round(tarball, module);
        rounds.push(one);
        ctx.log(`newcomer: round ${r + 1}: install ${(one.installMs / 1000).toFixed(1)} s, simulator ${(one.simulatorMs / 1000).toFixed(2)} s, to the first reconcile ${(one.operatorMs / 1000).toFixed(2)} s, total ${(one.totalMs / 1000).toFixed(1)} s`);
      }
      const bench = 'newcomer: npm init → operator reconciling on the simulator';
      return [
        row(bench, 'npm init + install', 'time', 's', summarize(rounds.map((x) => x.installMs / 1000)), `npm's cache warm after the first round (${((rounds[0]?.installMs ?? 0) / 1000).toFixed(1)} s)`),
        row(bench, 'simulator serving the CRD', 'time', 's', summarize(rounds.map((x) => x.simulatorMs / 1000))),
        row(bench, 'Website applied → Ready condition, Deployment, Service', 'time', 's', summarize(rounds.map((x) => x.operatorMs / 1000))),
        row(bench, 'total', 'time', 's', summarize(rounds.map((x) => x.totalMs / 1000)), `first round ${((rounds[0]?.totalMs ?? 0) / 1000).toFixed(1)} s`),
      ];
    } finally {
      rmSync(packDir, { recursive: true, force: true });
    }
  },
};
