import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliProcess, type CliResult, type ExtraEnv } from './run.js';

// Each run gets an empty HOME and no KUBECONFIG, so the kubeconfig of the machine running the tests never leaks in,
// and no in-cluster variables, so a test run inside a pod does not find its service account.
let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'rxkube-cli-home-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

/** Runs the command with nothing of the machine's kubeconfig; fails if it has not ended on its own after 15 s. */
async function run(args: readonly string[], extraEnv: ExtraEnv = {}): Promise<CliResult> {
  const cli = new CliProcess(args, { HOME: home, KUBECONFIG: undefined, KUBERNETES_SERVICE_HOST: undefined, KUBERNETES_SERVICE_PORT: undefined, ...extraEnv });
  let timer: NodeJS.Timeout | undefined;
  const still = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, 15_000, undefined)));
  const result = await Promise.race([cli.exited, still]);
  clearTimeout(timer);
  if (result === undefined) {
    const killed = await cli.stop('SIGKILL');
    throw new Error(`still running after 15 s; stdout:\n${killed.stdout.slice(-2000)}\nstderr:\n${killed.stderr.slice(-2000)}`);
  }
  return result;
}

/** The run failed with exactly one line on stderr, and printed nothing on stdout. */
function oneErrorLine(r: CliResult): string {
  expect(r.stdout).toBe('');
  expect(r.code).toBe(1);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  return lines[0] as string;
}

const CONFIG = (server: string, current = 'dev'): string =>
  'apiVersion: v1\nkind: Config\n' +
  `clusters: [{ name: c, cluster: { server: "${server}" } }]\n` +
  'contexts: [{ name: dev, context: { cluster: c, user: u } }]\n' +
  `${current === '' ? '' : `current-context: ${current}\n`}users: [{ name: u, user: {} }]\n`;

describe('rxkube watch: where the cluster is, told in one line', { timeout: 60_000 }, () => {
  it('--kubeconfig naming a file that does not exist', async () => {
    const r = await run(['watch', 'pods', '--kubeconfig', join(home, 'no', 'such', 'file')]);
    expect(oneErrorLine(r)).toBe(`error: --kubeconfig: ${join(home, 'no', 'such', 'file')} does not exist`);
  });

  it('no kubeconfig at all: named at once, not a retry loop against localhost:8080', async () => {
    const live = await run(['watch', 'pods']);
    expect(oneErrorLine(live)).toBe(
      `error: no kubeconfig: ${join(home, '.kube', 'config')} does not exist and KUBECONFIG is not set; pass --kubeconfig <file>, or try --simulator`,
    );
    const once = await run(['watch', 'pods', '--once']);
    expect(oneErrorLine(once)).toBe(oneErrorLine(live));
  });

  it('--context with no kubeconfig names the missing kubeconfig, not a fallback context', async () => {
    const r = await run(['watch', 'pods', '--context', 'nosuch']);
    const line = oneErrorLine(r);
    expect(line).toMatch(/^error: no kubeconfig: /);
    expect(line).not.toContain('loaded-context');
  });

  it('KUBECONFIG naming a file that does not exist, alone or in a list', async () => {
    const missing = join(home, 'missing');
    expect(oneErrorLine(await run(['watch', 'pods'], { KUBECONFIG: missing }))).toBe(`error: KUBECONFIG: ${missing} does not exist`);
    const good = join(home, 'good');
    writeFileSync(good, CONFIG('http://127.0.0.1:9'));
    expect(oneErrorLine(await run(['watch', 'pods', '--once'], { KUBECONFIG: [good, missing].join(delimiter) }))).toBe(`error: KUBECONFIG: ${missing} does not exist`);
  });

  it('a malformed kubeconfig, given or found in ~/.kube', async () => {
    const bad = join(home, 'bad');
    writeFileSync(bad, 'clusters: [{ name: c\ncontexts: nope: [\n');
    expect(oneErrorLine(await run(['watch', 'pods', '--kubeconfig', bad]))).toMatch(new RegExp(`^error: --kubeconfig: ${bad} is not a valid kubeconfig: \\S`));
    const noCluster = join(home, 'no-cluster');
    writeFileSync(noCluster, 'apiVersion: v1\nkind: Config\nclusters: [{ name: c }]\n');
    expect(oneErrorLine(await run(['watch', 'pods', '--kubeconfig', noCluster]))).toBe(`error: --kubeconfig: ${noCluster} is not a valid kubeconfig: clusters[0].cluster is missing`);
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), 'clusters: [{ name: c\ncontexts: nope: [\n');
    expect(oneErrorLine(await run(['watch', 'pods']))).toMatch(new RegExp(`^error: kubeconfig: ${join(home, '.kube', 'config')} is not a valid kubeconfig: \\S`));
  });

  it('a malformed kubeconfig holding a token: the line says where, and prints nothing of the token', async () => {
    const token = 'tok-77ac0e1d-SECRET';
    for (const doc of [`users:\n- name: u\n  user:\n    token: ${token}\n   oops: [\n`, `users: *${token}\n`, `users: !<tag:${token}> x\n`]) {
      const bad = join(home, 'with-token');
      writeFileSync(bad, doc);
      const line = oneErrorLine(await run(['watch', 'pods', '--kubeconfig', bad]));
      expect(line).not.toContain(token);
      expect(line).toMatch(new RegExp(`^error: --kubeconfig: ${bad} is not a valid kubeconfig: .* at line \\d+, column \\d+$`));
    }
  });

  it('a kubeconfig without a current context asks for --context, listing the ones it has', async () => {
    const file = join(home, 'config');
    writeFileSync(file, CONFIG('http://127.0.0.1:9', ''));
    expect(oneErrorLine(await run(['watch', 'pods', '--kubeconfig', file]))).toBe(`error: ${file} sets no current-context; choose one with --context (it has: dev)`);
    writeFileSync(file, 'apiVersion: v1\nkind: Config\n');
    expect(oneErrorLine(await run(['watch', 'pods', '--kubeconfig', file]))).toBe(`error: ${file} sets no current-context; choose one with --context (it has: none)`);
  });

  it('several --context with a missing kubeconfig is the same one line', async () => {
    const missing = join(home, 'missing');
    const r = await run(['watch', 'pods', '--kubeconfig', missing, '--context', 'a', '--context', 'b']);
    expect(oneErrorLine(r)).toBe(`error: --kubeconfig: ${missing} does not exist`);
  });

  it('-n on a cluster-scoped resource is refused, as the library refuses it', async () => {
    const simulated = await run(['watch', 'nodes', '-n', 'web', '--simulator', '--once']);
    expect(oneErrorLine(simulated)).toBe('error: -n/--namespace: v1/nodes is cluster-scoped; leave -n out');
    const file = join(home, 'config');
    writeFileSync(file, CONFIG('http://127.0.0.1:9'));
    const real = await run(['watch', 'nodes', '-n', 'web', '--kubeconfig', file]);
    expect(oneErrorLine(real)).toBe('error: -n/--namespace: v1/nodes is cluster-scoped; leave -n out');
    // -A stays accepted: every namespace of a cluster-scoped resource is all of it, as kubectl takes it.
    const all = await run(['watch', 'nodes', '-A', '--simulator', '--once', '--objects', '2']);
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
  });
});
