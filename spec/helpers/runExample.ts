import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What a program printed and how it ended. */
export interface ProgramRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a built example (build/examples/<name>.js, made by the test run's
 * global setup) as a user would, and collects what it printed.
 */
export function runExample(name: string, args: readonly string[]): Promise<ProgramRun> {
  const built = fileURLToPath(new URL(`../../build/examples/${name}.js`, import.meta.url));
  return runNode([built, ...args]);
}

/**
 * Runs the project's Node with `args` (in `opts.cwd`, if given) and collects what it printed. After `opts.timeoutMs`
 * it is killed, which leaves no exit code.
 */
export function runNode(args: readonly string[], opts: { readonly cwd?: string; readonly timeoutMs?: number; readonly env?: NodeJS.ProcessEnv } = {}): Promise<ProgramRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      ...(opts.cwd !== undefined && { cwd: opts.cwd }),
      ...(opts.env !== undefined && { env: opts.env }),
      ...(opts.timeoutMs !== undefined && { timeout: opts.timeoutMs }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    // 'close', not 'exit': only then has all it printed been read.
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A built example running in the background. */
export interface ExampleProcess {
  readonly child: ChildProcess;
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with its exit code (null when a signal killed it), once all it printed has been read. */
  readonly exited: Promise<number | null>;
}

/**
 * Starts a built example as a process of its own (build/examples/<name>.js), for specs that talk to it
 * while it runs (its probes) and signal it, as a kubelet would.
 */
export function startExample(name: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): ExampleProcess {
  const built = fileURLToPath(new URL(`../../build/examples/${name}.js`, import.meta.url));
  const child = spawn(process.execPath, [built, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}
