import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/waitFor.js';

/** The built command, as `npx rxkube` runs it. */
export const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** What a finished run printed. */
export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Variables added to a run's environment; `undefined` removes one. */
export type ExtraEnv = Record<string, string | undefined>;

/** The environment of a run: no colour forced either way unless a test asks. */
function env(extra: ExtraEnv): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _f, NO_COLOR: _n, ...rest } = process.env;
  const merged: NodeJS.ProcessEnv = { ...rest, ...extra };
  for (const [name, value] of Object.entries(extra)) if (value === undefined) delete merged[name];
  return merged;
}

/** A running command whose output is collected as it comes. */
export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<CliResult>;

  constructor(args: readonly string[], extraEnv: ExtraEnv = {}) {
    this.child = spawn(process.execPath, [MAIN, ...args], { env: env(extraEnv) });
    this.child.stdout.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code, signal) => resolve({ code, signal, stdout: this.stdout, stderr: this.stderr }));
    });
  }

  /** Resolves once `predicate` holds for the output so far; rejects with the output after `timeoutMs`. */
  async waitFor(predicate: (stdout: string, stderr: string) => boolean, timeoutMs = 20_000): Promise<void> {
    const held = (): boolean => {
      if (predicate(this.stdout, this.stderr)) return true;
      if (this.child.exitCode !== null) throw new Error(`exited (${this.child.exitCode}) before the condition held\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      return false;
    };
    await waitFor(held, 'the output', timeoutMs, { everyMs: 50, describe: () => `\nstdout:\n${this.stdout.slice(-3000)}\nstderr:\n${this.stderr.slice(-3000)}` });
  }

  /** Sends a signal and waits for the exit, killing the process if it has not gone after `timeoutMs`. */
  async stop(signal: NodeJS.Signals = 'SIGINT', timeoutMs = 15_000): Promise<CliResult> {
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Runs the command to its end.
 *
 * @param args its arguments.
 * @param extraEnv variables added to the environment.
 * @returns its exit and output.
 */
export function runCli(args: readonly string[], extraEnv: ExtraEnv = {}): Promise<CliResult> {
  return new CliProcess(args, extraEnv).exited;
}
