import { describe, expect, it } from 'vitest';
import { runCli } from './run.js';

describe('rxkube: arguments', () => {
  it('--help names every command', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Usage: rxkube/);
    expect(stdout).toMatch(/^\s+watch \[options\] <resource>/m);
    expect(stdout).toMatch(/^\s+demo \[options\]/m);
  });

  it('watch --help names every flag', async () => {
    const { code, stdout } = await runCli(['watch', '--help']);
    expect(code).toBe(0);
    for (const flag of [
      '-n, --namespace <namespace>',
      '-A, --all-namespaces',
      '-l, --selector <selector>',
      '--field-selector <selector>',
      '--context <name>',
      '--kubeconfig <path>',
      '-o, --output <format>',
      '--once',
      '--timeout <duration>',
      '--simulator',
      '--objects <n>',
      '--churn <per-second>',
      '--seed <n>',
      '--fifo <mode>',
      '-h, --help',
    ]) {
      expect(stdout).toContain(flag);
    }
  });

  it('demo --help names every flag', async () => {
    const { code, stdout } = await runCli(['demo', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('--duration <duration>');
    expect(stdout).toContain('--rate <per-second>');
  });

  it('a misspelt flag is an error with a suggestion, not ignored', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '--simulater']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain("error: unknown option '--simulater'");
    expect(stderr).toContain('--simulator');
  });

  it('a misspelt command is an error', async () => {
    const { code, stderr } = await runCli(['wacth', 'pods']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/unknown command 'wacth'/);
  });

  it('an extra argument is an error', async () => {
    const { code, stderr } = await runCli(['watch', 'pods', 'deployments']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/too many arguments/);
  });

  it('an unknown resource is named at once', async () => {
    const { code, stderr } = await runCli(['watch', 'podz', '--simulator']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: unknown resource "podz"');
  });

  it('a group without a dot that is not built in is refused', async () => {
    const { code, stderr } = await runCli(['watch', 'apps/v1/widgets', '--simulator']);
    expect(code).toBe(1);
    expect(stderr).toContain('apps/v1/widgets is not a built-in resource');
  });

  it('a bad label selector is named with its position before anything starts', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '--simulator', '-l', 'app in (web']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/error: invalid label selector "app in \(web" at position \d+/);
  });

  it('a bad field selector is named before anything starts', async () => {
    const { code, stderr } = await runCli(['watch', 'pods', '--simulator', '--field-selector', 'status.phase']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error: invalid field selector/);
  });

  it('-n and -A together are refused', async () => {
    const { code, stderr } = await runCli(['watch', 'pods', '--simulator', '-n', 'web', '-A']);
    expect(code).toBe(1);
    expect(stderr).toContain('cannot be combined');
  });

  it('a bad --fifo mode is refused, naming the two there are', async () => {
    const output = await runCli(['watch', 'pods', '--fifo', 'inOrder']);
    expect(output.code).toBe(1);
    expect(output.stderr).toMatch(/argument 'inOrder' is invalid.*Allowed choices are perKey, ordered/s);
  });

  it('a bad output format and a bad duration are refused', async () => {
    const output = await runCli(['watch', 'pods', '-o', 'yaml']);
    expect(output.code).toBe(1);
    expect(output.stderr).toMatch(/argument 'yaml' is invalid.*Allowed choices are table, json/s);
    const duration = await runCli(['demo', '--duration', 'soon']);
    expect(duration.code).toBe(1);
    expect(duration.stderr).toContain('expected a duration such as 30s');
  });

  it('--simulator with a kubeconfig is refused', async () => {
    const { code, stderr } = await runCli(['watch', 'pods', '--simulator', '--context', 'prod']);
    expect(code).toBe(1);
    expect(stderr).toContain('--simulator cannot be combined with --kubeconfig or --context');
  });
});
