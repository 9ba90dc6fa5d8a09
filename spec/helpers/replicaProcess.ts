import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { waitFor } from './waitFor.js';

/** Wall-clock ms on a clock every process of the machine shares. */
export const now = (): number => performance.timeOrigin + performance.now();

/** Every replica process still running, killed if the test process goes away first. */
const live = new Set<ReplicaProcess<{ readonly event: string }>>();
process.once('exit', () => {
  for (const r of live) if (!r.exited) r.kill();
});

/**
 * A replica in a process of its own, running a script that imports the
 * package built in dist/: it takes JSON commands, one a line, on stdin and
 * writes JSON lines on stdout (anything else it prints counts as stderr).
 */
export class ReplicaProcess<Line extends { readonly event: string }> {
  readonly name: string;
  readonly lines: Line[] = [];
  /** When the test SIGKILLed it, on the shared clock. */
  killedAt: number | undefined;
  readonly #child: ChildProcess;
  readonly #exited: Promise<unknown>;
  #stderr = '';

  constructor(script: string, name: string) {
    this.name = name;
    this.#child = spawn(process.execPath, [script, name], { stdio: ['pipe', 'pipe', 'pipe'] });
    // 'close', not 'exit': only then have all its lines been read.
    this.#exited = once(this.#child, 'close');
    createInterface({ input: this.#child.stdout! }).on('line', (text) => {
      try {
        this.lines.push(JSON.parse(text) as Line);
      } catch {
        this.#stderr += `${text}\n`;
      }
    });
    this.#child.stderr!.on('data', (b: Buffer) => (this.#stderr += b.toString()));
    live.add(this);
  }

  get exited(): boolean {
    return this.#child.exitCode !== null || this.#child.signalCode !== null;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Waits for its `ready` line; throws with its stderr when it exits first. */
  async ready(timeoutMs = 60_000): Promise<void> {
    await waitFor(() => this.lines.some((l) => l.event === 'ready') || this.exited, `${this.name} to start`, timeoutMs);
    if (this.exited) throw new Error(`${this.name} exited: ${this.#stderr}`);
  }

  kill(): void {
    this.killedAt = now();
    this.#child.kill('SIGKILL');
  }

  /** Asks it to exit (`{ op: 'exit' }`); kills it if it has not exited within `timeoutMs`. */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    if (!this.exited) {
      this.send({ op: 'exit' });
      const timer = setTimeout(() => this.#child.kill('SIGKILL'), timeoutMs);
      await this.#exited;
      clearTimeout(timer);
    }
    live.delete(this);
  }

  /** Writes one command line to its stdin. */
  protected send(cmd: object): void {
    this.#child.stdin!.write(`${JSON.stringify(cmd)}\n`);
  }
}
