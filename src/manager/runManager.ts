import { CallbackError } from '../errors/CallbackError.js';
import { reportError } from '../errors/reportError.js';
import { manager } from './manager.js';
import type { ManagerEvent, ManagerOptions } from './options.js';
import { describeValue, functionOption } from '../options/validate.js';

/**
 * Options of {@link runManager}: the manager's, and what `main()` needs
 * around it.
 *
 * ## Example
 * ```ts
 * import { runManager, type Controller } from 'rxkube';
 * import type { RunManagerOptions } from 'rxkube/core';
 * declare const c: Controller<unknown>;
 *
 * const opts: RunManagerOptions = { controllers: [c], onEvent: (e) => e.type === 'serving' && console.log(e.url) };
 * process.exitCode = await runManager(opts);
 * ```
 */
export interface RunManagerOptions extends ManagerOptions {
  /** Receives every event of the manager (where it serves, leadership, reconcile outcomes). @default undefined */
  readonly onEvent?: (event: ManagerEvent) => void;
  /**
   * Process signals that stop the manager gracefully. A second one while it
   * drains gives up waiting: the promise resolves 1 at once.
   * @default ['SIGTERM', 'SIGINT']
   */
  readonly signals?: readonly NodeJS.Signals[];
  /** Where the reason of a non-zero exit is written. @default process.stderr */
  readonly stderr?: {
    /** Writes one line of text. */
    write(text: string): unknown;
  };
}

/**
 * Runs a {@link manager} for a program's `main()` and resolves its exit
 * code: 0 after a graceful stop (SIGTERM, SIGINT, `signal`), 1 after a
 * fatal error (a source that failed for good, a lost lease, a server that
 * could not listen), whose reason is written to stderr first. It is the
 * manager's subscription with the process signals wired to its `signal`,
 * nothing more; the listeners are removed when it resolves.
 *
 * ## Example
 * ```ts
 * import { controller, informer, kubeSource, leaseLock, loadKubeConfig, runManager, type Reconciler } from 'rxkube';
 * import type { V1Deployment } from '@kubernetes/client-node';
 * declare const reconcile: Reconciler<V1Deployment>;
 *
 * const kc = loadKubeConfig();
 * const c = controller({ for: informer(kubeSource(kc, 'apps/v1/deployments')), reconcile });
 * process.exit(await runManager({
 *   controllers: [c],
 *   leaderElection: { lock: leaseLock(kc, { namespace: 'ops', name: 'my-controller' }) },
 *   onEvent: (e) => e.type === 'reconcile' && e.outcome.type === 'failed' && console.warn(e.outcome.key, e.outcome.error.message),
 * }));
 * ```
 *
 * @param opts the manager's options, plus `onEvent`, `signals` and `stderr`.
 * @returns 0 after a graceful stop, 1 after a fatal error or a second signal.
 * @throws {TypeError} when an option is invalid, before anything starts.
 */
export function runManager(opts: RunManagerOptions): Promise<number> {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`runManager: options must be an object, got ${describeValue(opts)}`);
  const { onEvent, signals = ['SIGTERM', 'SIGINT'], stderr = process.stderr, ...managerOpts } = opts;
  functionOption('runManager', 'onEvent', onEvent);
  if (!Array.isArray(signals) || signals.some((s) => typeof s !== 'string' || !s.startsWith('SIG'))) {
    throw new TypeError(`runManager: option "signals" must be an array of signal names such as 'SIGTERM', got ${describeValue(signals)}`);
  }
  const stop = new AbortController();
  const outer = managerOpts.signal;
  const m = manager({ ...managerOpts, signal: outer === undefined ? stop.signal : AbortSignal.any([outer, stop.signal]) });
  return new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      if (!stop.signal.aborted) {
        stop.abort();
        return;
      }
      stderr.write(`manager: ${signal} again while stopping; not waiting any longer\n`);
      done(1);
    };
    const done = (code: number): void => {
      for (const s of signals) process.off(s, onSignal);
      resolve(code);
    };
    for (const s of signals) process.on(s, onSignal);
    m.subscribe({
      next: (e) => {
        try {
          onEvent?.(e);
        } catch (err) {
          reportError(new CallbackError('runManager', `onEvent threw on a ${e.type} event; the manager runs on`, err));
        }
      },
      complete: () => done(0),
      error: (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        stderr.write(`manager: stopped on an error: ${message.replace(/^manager: /, '')}\n`);
        done(1);
      },
    });
  });
}
