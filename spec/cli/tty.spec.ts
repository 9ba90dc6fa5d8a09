import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/waitFor.js';
import { MAIN } from './run.js';

/** A tmux server of this test's own, so nothing else's sessions are touched. */
const SOCKET = `rxkube-cli-test-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, '-f', '/dev/null', ...args], { encoding: 'utf8' });
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

describe('rxkube watch in a terminal', () => {
  afterEach(() => {
    try {
      tmux('kill-server');
    } catch {
      // Already gone: the session ended with its pane.
    }
  });

  it('draws the live table and sync state in place, and Ctrl-C ends it cleanly', async () => {
    const command = [process.execPath, MAIN, 'watch', 'pods', '-A', '--simulator', '--objects', '300', '--churn', '50'].map(quote).join(' ');
    // The shell writes how the command ended to a file: tmux 3.3 may lose the exit status of a pane whose terminal
    // closed just before its process exited. A command that handles Ctrl-C and exits 0 leaves the shell running to
    // write it; one killed by the signal takes the shell down too, and nothing is written.
    const statusFile = join(mkdtempSync(join(tmpdir(), 'rxkube-tty-')), 'status');
    tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', 'cli', '-e', 'TERM=xterm-256color', '-e', 'NO_COLOR=', `${command}; echo $? > ${quote(statusFile)}`, ';', 'set-option', '-t', 'cli', 'remain-on-exit', 'on');
    const screen = (): string => tmux('capture-pane', '-p', '-t', 'cli');

    // A capture can land in the middle of a redraw, so wait for a whole frame: one that ends with its last line.
    const whole = (s: string): string | undefined =>
      /watching at rv \d+/.test(s) && /synced in/.test(s) && /\d+ live events\/s/.test(s) && /update \d/.test(s) && /^… \d+ more$/m.test(s) ? s : undefined;
    let last = '';
    const shown = await waitFor(() => whole((last = screen())), 'a whole frame of the live table', 30_000, { everyMs: 100, describe: () => `last screen:\n${last}` });
    const lines = shown.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^rxkube watch v1\/pods · all namespaces · synced in \d+(ms|\.\ds)/);
    expect(shown).toMatch(/^reflector watching at rv \d+ · lists 1 \(relists 0\) · watches \d+ \(reconnects \d+\) · errors 0/m);
    expect(shown).toMatch(/^by namespace: default \d+ · web \d+ · kube-system \d+ · batch \d+/m);
    expect(shown).toMatch(/^NAMESPACE\s+NAME\s+STATUS\s+AGE\s+LAST$/m);
    expect(shown).toMatch(/^(default|web|kube-system|batch)\s+\S+\s+\d\/1 \w+\s+\d+s\s+(add|update|delete) \d+(ms|\.\ds) ago$/m);
    expect(shown).toMatch(/^… \d+ more$/m);
    // Redrawn in place: the header is on screen once, and the view fits the 40 rows.
    expect(shown.match(/rxkube watch v1\/pods/g)).toHaveLength(1);
    expect(lines.length).toBeLessThanOrEqual(40);
    // On a terminal it is coloured.
    expect(tmux('capture-pane', '-p', '-e', '-t', 'cli')).toContain('\u001b[');

    tmux('send-keys', '-t', 'cli', 'C-c');
    const written = (): string => (existsSync(statusFile) ? readFileSync(statusFile, 'utf8') : '');
    const status = await waitFor(() => written().endsWith('\n') && written(), 'the exit status', 15_000, { everyMs: 100 });
    // Exited by itself with status 0 (not killed by the signal): the informer was unsubscribed and the simulator
    // closed, so no socket or timer was left to keep the process alive.
    expect(status.trim()).toBe('0');
  });
});
