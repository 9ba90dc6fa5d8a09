import { spawn } from 'node:child_process';
import { codeSuffix, CredentialFailure } from './credentialFailure.js';

/**
 * Bytes of standard output a credential plugin may print. An ExecCredential
 * holding a token and a client certificate with its key is a few KiB; a
 * plugin printing more is broken or hostile and is stopped.
 */
export const MAX_PLUGIN_OUTPUT = 1024 * 1024;

/** What to start: the kubeconfig's command and arguments, and the whole environment to give it. */
export interface PluginCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** One running plugin process (internal). */
export interface PluginRun {
  /** The process id, for tests that check the process is gone. */
  readonly pid: number | undefined;
  /** Its standard output once it exited with code 0; a {@link CredentialFailure} otherwise. */
  readonly output: Promise<string>;
  /** Ends the process (and what it started) at once; the output then rejects. Idempotent. */
  kill(): void;
}

/** POSIX: the plugin leads a process group of its own, so a shell script's children die with it. */
const OWN_GROUP = process.platform !== 'win32';

/**
 * Runs not ended yet. In a group of its own a plugin no longer dies with a
 * terminal's Ctrl-C, so a process that exits ends them on its way out.
 */
const live = new Set<() => void>();
const endAll = (): void => {
  for (const kill of [...live]) kill();
};

/**
 * Starts a credential plugin with no standard input (rxkube never runs one
 * interactively), its standard output collected up to
 * {@link MAX_PLUGIN_OUTPUT} bytes and its standard error read and dropped:
 * a plugin's diagnostics may carry what it was asked to hide, and nothing it
 * prints may reach an error (internal).
 */
export function startPlugin(cmd: PluginCommand): PluginRun {
  const child = spawn(cmd.command, [...cmd.args], { env: cmd.env, stdio: ['ignore', 'pipe', 'pipe'], detached: OWN_GROUP, windowsHide: true });
  let stopped = false;
  /** Every output stream closed: nothing of the run is left to wait for. */
  let closed = false;
  const kill = (): void => {
    forget();
    if (stopped || closed || child.pid === undefined) return;
    stopped = true;
    try {
      // The group even when its leader already exited: what it started may still hold the output open.
      if (OWN_GROUP) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // The group is gone already (ESRCH).
    }
  };
  const forget = (): void => {
    live.delete(kill);
    if (live.size === 0) process.off('exit', endAll);
  };
  if (child.pid !== undefined) {
    if (live.size === 0) process.on('exit', endAll);
    live.add(kill);
  }
  const output = new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let failure: CredentialFailure | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PLUGIN_OUTPUT) {
        parts.push(chunk);
        return;
      }
      failure ??= new CredentialFailure(`the exec plugin printed more than ${MAX_PLUGIN_OUTPUT} bytes and was stopped`);
      parts.length = 0;
      kill();
    });
    child.stderr.resume();
    child.on('error', (err) => {
      failure ??= new CredentialFailure(`the exec plugin could not be started${codeSuffix(err)}`, (err as { code?: string }).code);
      if (child.pid === undefined) reject(failure);
    });
    child.on('close', (code, signal) => {
      closed = true;
      forget();
      if (failure !== undefined) reject(failure);
      else if (stopped) reject(new CredentialFailure('the exec plugin was stopped before it answered'));
      else if (code !== 0) reject(new CredentialFailure(code === null ? `the exec plugin was ended by ${String(signal)}` : `the exec plugin exited with code ${code}`));
      else resolve(Buffer.concat(parts).toString('utf8'));
    });
  });
  return { pid: child.pid, output, kill };
}
