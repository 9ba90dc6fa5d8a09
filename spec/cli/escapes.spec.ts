import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';
import { waitFor } from '../helpers/waitFor.js';
import { CliProcess, MAIN, runCli } from './run.js';

/**
 * What a hostile object may carry to take over a terminal: a window title
 * (OSC 0), a clear screen (CSI 2J), a clipboard write (OSC 52), an 8-bit CSI
 * (U+009B), a right-to-left override and a DEL.
 */
const HOSTILE = '\u001b]0;owned\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\u009b31mRED\u202eEVIL\u007f';
/** How the command must show it: every control a visible escape, nothing deleted. */
const SHOWN = '\\x1b]0;owned\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\u009b31mRED\\u202eEVIL\\x7f';

/** A byte a terminal would act on: C0 but the line break, DEL, C1, and the bidi overrides and isolates. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** The same, but colour sequences (ESC [ digits m) are the printer's own and allowed. */
const RAW_CONTROL_BUT_COLOURS = (text: string): RegExpMatchArray | null => text.replace(/\u001b\[[0-9;]*m/g, '').match(RAW_CONTROL);

let server: ApiServer;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  server = await startApiServer({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'rxkube-escapes-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  await server.create('v1/pods', { ...pod('crashing'), status: { phase: 'Running', containerStatuses: [{ name: 'app', ready: false, state: { waiting: { reason: HOSTILE } } }] } });
  await server.create('coordination.k8s.io/v1/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader', namespace: 'default' }, spec: { holderIdentity: HOSTILE } });
  await server.create('v1/events', {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'ev', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'crashing', namespace: 'default' },
    reason: HOSTILE,
    message: HOSTILE,
    type: 'Warning',
  });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rxkube watch shows terminal escapes from the cluster, never sends them', { timeout: 60_000 }, () => {
  it('--once tables of Pods, Leases and Events: the reason and holder are shown escaped, no control byte reaches stdout', async () => {
    for (const resource of ['pods', 'leases', 'events']) {
      const { code, stdout, stderr } = await runCli(['watch', resource, '-n', 'default', '--once', '--kubeconfig', kubeconfig]);
      expect(code, stderr).toBe(0);
      expect(stdout.match(RAW_CONTROL), resource).toBeNull();
      // Cut to the STATUS column's width, but readable.
      expect(stdout, resource).toContain('\\x1b]0;owned');
    }
  });

  it('with colours forced, the only escape sequences are the printer\'s own colours', async () => {
    const { code, stdout } = await runCli(['watch', 'pods', '-n', 'default', '--once', '--kubeconfig', kubeconfig], { FORCE_COLOR: '1' });
    expect(code).toBe(0);
    expect(stdout).toContain('\u001b[');
    expect(RAW_CONTROL_BUT_COLOURS(stdout)).toBeNull();
  });

  it('-o json: still JSON carrying the exact value, with no raw control byte (C1 and bidi included, which JSON.stringify leaves raw)', async () => {
    const { code, stdout } = await runCli(['watch', 'leases', '-n', 'default', '--once', '-o', 'json', '--kubeconfig', kubeconfig]);
    expect(code).toBe(0);
    expect(stdout.match(RAW_CONTROL)).toBeNull();
    const line = JSON.parse(stdout.trim()) as { object: { spec: { holderIdentity: string } } };
    expect(line.object.spec.holderIdentity).toBe(HOSTILE);
  });

  it('in a pipe: a server Status message on stderr and each change line on stdout are escaped', async () => {
    server.faults.inject({ type: 'status', status: 403, message: `forbidden ${HOSTILE}` }, { verb: 'list', resource: 'v1/pods', times: 1 });
    const cli = new CliProcess(['watch', 'pods', '-n', 'default', '--kubeconfig', kubeconfig]);
    try {
      await cli.waitFor((out) => /^NAME\s+STATUS/m.test(out));
      const current = server.get<Record<string, unknown>>('v1/pods', 'default', 'crashing') as Record<string, unknown>;
      await server.update('v1/pods', { ...current, metadata: { ...(current['metadata'] as object), labels: { touched: 'yes' } } });
      await cli.waitFor((out) => /^update\s+default\/crashing/m.test(out));
    } finally {
      await cli.stop();
    }
    expect(cli.stderr).toContain(`forbidden ${SHOWN}`);
    expect(cli.stdout).toMatch(new RegExp(`^update\\s+default/crashing\\s+0/1 ${SHOWN.replace(/[\\[\]^$.|?*+()]/g, '\\$&')}$`, 'm'));
    expect(cli.stdout.match(RAW_CONTROL)).toBeNull();
    expect(cli.stderr.match(RAW_CONTROL)).toBeNull();
  });

  it('a usage error quoting the kubeconfig (its context names) is escaped too', async () => {
    const evil = join(dir, 'evil-contexts');
    // YAML's double-quoted escapes: \e is ESC, \a is BEL.
    writeFileSync(evil, `apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "${server.url}" } }]\nusers: [{ name: u, user: {} }]\ncontexts: [{ name: "evil\\e]0;owned\\a", context: { cluster: c, user: u } }]\n`);
    const { code, stdout, stderr } = await runCli(['watch', 'pods', '--context', 'nope', '--kubeconfig', evil]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.match(RAW_CONTROL)).toBeNull();
    expect(stderr).toContain('evil\\x1b]0;owned\\x07');
  });

  it('several clusters (a context name carrying escapes among them): the table and the JSON lines are escaped too', async () => {
    const fleet = join(dir, 'fleet');
    const cluster = (name: string): string => `{ name: "${name}", cluster: { server: "${server.url}" } }`;
    writeFileSync(
      fleet,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [${cluster('one')}, ${cluster('two\\e]0;owned\\a')}]`,
        'users: [{ name: u, user: {} }]',
        'contexts: [{ name: one, context: { cluster: one, user: u } }, { name: "two\\e]0;owned\\a", context: { cluster: "two\\e]0;owned\\a", user: u } }]',
        'current-context: one',
        '',
      ].join('\n'),
    );
    const table = await runCli(['watch', 'pods', '-n', 'default', '--all-contexts', '--once', '--kubeconfig', fleet]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.match(RAW_CONTROL)).toBeNull();
    expect(table.stdout).toContain('two\\x1b]0;owned\\x07');
    expect(table.stdout).toContain('\\x1b]0;owned');
    const json = await runCli(['watch', 'pods', '-n', 'default', '--all-contexts', '--once', '-o', 'json', '--kubeconfig', fleet]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout.match(RAW_CONTROL)).toBeNull();
    const lines = json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { cluster: string; object: { status: { containerStatuses: { state: { waiting: { reason: string } } }[] } } });
    expect(lines.map((l) => l.cluster).sort()).toEqual(['one', 'two\u001b]0;owned\u0007']);
    expect(lines.every((l) => l.object.status.containerStatuses[0]?.state.waiting.reason === HOSTILE)).toBe(true);
  });

  it('on a terminal: the live view shows the escapes as text, and the title is not changed', async () => {
    const socket = `rxkube-escapes-${process.pid}`;
    const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, MAIN, 'watch', 'pods', '-n', 'default', '--kubeconfig', kubeconfig].map(quote).join(' ');
    tmux('new-session', '-d', '-x', '160', '-y', '20', '-s', 'cli', '-e', 'TERM=xterm-256color', command, ';', 'set-option', '-t', 'cli', 'remain-on-exit', 'on');
    try {
      let last = '';
      await waitFor(() => /watching at rv \d+/.test((last = tmux('capture-pane', '-p', '-t', 'cli'))) && /crashing/.test(last), 'the live table', 30_000, {
        everyMs: 100,
        describe: () => last,
      });
      // The screen was not cleared and the text is there to read, up to the width of the STATUS column.
      expect(last).toMatch(/crashing\s+0\/1 \\x1b\]0;owned\\x07/);
      expect(tmux('display-message', '-p', '-t', 'cli', '#{pane_title}').trim()).not.toBe('owned');
      tmux('send-keys', '-t', 'cli', 'C-c');
    } finally {
      try {
        tmux('kill-server');
      } catch {
        // Already gone.
      }
    }
  });
});
