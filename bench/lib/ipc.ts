// Request/response over the IPC channel `child_process.fork` opens, so the
// simulator and the measured clients each live in their own process and
// one process's heap or CPU never shows up in another's figures.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface Request {
  readonly id: number;
  readonly cmd: string;
  readonly args: unknown;
}

type Reply = { readonly id: number; readonly ok: true; readonly value: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

/** Command handlers a child serves; each gets the request's args and returns the reply value. */
export type Handlers = Readonly<Record<string, (args: never) => unknown>>;

/**
 * Serves requests from the parent. The child exits when the parent goes
 * away, so a crashed benchmark leaves no simulator running.
 */
export function serve(handlers: Handlers): void {
  if (process.send === undefined) throw new Error('this program is started by the benchmark runner (bench/index.ts), not directly');
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: Request) => {
    const handler = handlers[message.cmd] as ((args: unknown) => unknown) | undefined;
    void (async (): Promise<Reply> => {
      try {
        if (handler === undefined) throw new Error(`unknown command ${message.cmd}`);
        return { id: message.id, ok: true, value: await handler(message.args) };
      } catch (e) {
        return { id: message.id, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
      }
    })().then((reply) => process.send?.(reply));
  });
}

/** Sends an unsolicited message to the parent (e.g. a result). */
export function post(message: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined) {
      reject(new Error('no IPC channel'));
      return;
    }
    process.send(message, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

/** A forked child process spoken to by request/response. */
export class Child {
  /** The process, for its pid and exit status. */
  readonly process: ChildProcess;
  /** Replies not yet received, by request id. */
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  #nextId = 1;
  /** Messages with an `event` field, for `next()`; queued until asked for. */
  #events: unknown[] = [];
  #waiters: ((m: unknown) => void)[] = [];
  /** Why the child is gone, once it is; later requests fail with it. */
  #gone: Error | undefined;
  #stderr = '';

  /**
   * @param script The compiled program, e.g. `new URL('./simServer.js', import.meta.url)`.
   * @param args Its argv.
   * @param execArgv Node flags (`--expose-gc`, heap size).
   * @param env Added to this process's environment.
   */
  constructor(script: URL, args: readonly string[], execArgv: readonly string[], env: NodeJS.ProcessEnv = {}) {
    const path = fileURLToPath(script);
    this.process = fork(path, [...args], { execArgv: [...execArgv], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (d: string) => {
      // Kept so a crash can be explained; forwarded so warnings are seen.
      this.#stderr = (this.#stderr + d).slice(-8000);
      process.stderr.write(d);
    });
    this.process.on('message', (m: Reply | { event: string }) => {
      if ('event' in m) {
        const waiter = this.#waiters.shift();
        if (waiter) waiter(m);
        else this.#events.push(m);
        return;
      }
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(`child ${path}: ${m.error}`));
    });
    this.process.on('exit', (code, signal) => {
      this.#gone = new Error(`child ${path} exited (code ${code}, signal ${signal})${this.#stderr ? `: ${this.#stderr.slice(-2000)}` : ''}`);
      for (const p of this.#pending.values()) {
        clearTimeout(p.timer);
        p.reject(this.#gone);
      }
      this.#pending.clear();
    });
  }

  /** Sends a command and waits for its reply. */
  request<T>(cmd: string, args: unknown = {}, timeoutMs = 120_000): Promise<T> {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${cmd}: no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.process.send({ id, cmd, args } satisfies Request);
    });
  }

  /** The next unsolicited message, waiting up to `timeoutMs`. */
  next<T>(timeoutMs = 300_000): Promise<T> {
    const queued = this.#events.shift();
    if (queued !== undefined) return Promise.resolve(queued as T);
    if (this.#gone) return Promise.reject(this.#gone);
    return new Promise<T>((resolve, reject) => {
      const onExit = (): void => {
        clearTimeout(timer);
        reject(this.#gone ?? new Error('child exited'));
      };
      const waiter = (m: unknown): void => {
        clearTimeout(timer);
        this.process.off('exit', onExit);
        resolve(m as T);
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        this.process.off('exit', onExit);
        reject(new Error(`no message from child within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push(waiter);
      this.process.once('exit', onExit);
    });
  }

  /** Ends the child: asks it to close, then kills it if it has not exited within `graceMs`. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.disconnect();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
