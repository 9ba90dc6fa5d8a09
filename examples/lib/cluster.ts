/**
 * What every example shares: where the cluster is and how long to run.
 *
 *   node build/examples/<name>.js                       # the current kubeconfig context
 *   node build/examples/<name>.js --simulator           # the built-in API-server simulator, seeded
 *   node build/examples/<name>.js --duration 10s        # stop after 10 s (default: Ctrl-C)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from 'rxkube/testing';

/** Where an example runs and how it ends. */
export interface ExampleCluster {
  readonly kc: KubeConfig;
  /** The simulator, when `--simulator` was given. */
  readonly simulator: ApiServer | undefined;
  /** Resolves on Ctrl-C (SIGINT/SIGTERM) or when `--duration` has passed. */
  readonly done: Promise<void>;
  /** Stops the simulator, if one was started. */
  close(): Promise<void>;
}

const USAGE = 'usage: [--simulator] [--duration <n>s|<n>ms]';

/** Parses `--duration 10s`, `--duration 500ms` or `--duration 3` (seconds). */
function parseDuration(text: string | undefined): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(text ?? '');
  if (m === null) throw new TypeError(`--duration: expected e.g. 10s or 500ms, got ${JSON.stringify(text)}; ${USAGE}`);
  return Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
}

/**
 * Reads the example's flags, starts the simulator (seeded by `seed`) when
 * asked, or loads the current kubeconfig context.
 *
 * @param argv the command-line arguments after the script.
 * @param seed fills the simulator with what the example needs to show something.
 * @returns the cluster, and a promise for when to stop.
 */
export async function exampleCluster(argv: readonly string[], seed: (server: ApiServer) => Promise<void>): Promise<ExampleCluster> {
  let simulated = false;
  let durationMs: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--simulator') simulated = true;
    else if (arg === '--duration') durationMs = parseDuration(argv[++i]);
    else if (arg?.startsWith('--duration=')) durationMs = parseDuration(arg.slice('--duration='.length));
    else throw new TypeError(`unknown argument ${JSON.stringify(arg)}; ${USAGE}`);
  }
  let simulator: ApiServer | undefined;
  let kc: KubeConfig;
  if (simulated) {
    simulator = await startApiServer({ port: 0, bookmarkIntervalMs: 5_000 });
    await seed(simulator);
    kc = simulator.kubeConfig();
  } else {
    kc = new KubeConfig();
    kc.loadFromDefault();
  }
  const done = new Promise<void>((resolve) => {
    const timer = durationMs === undefined ? undefined : setTimeout(resolve, durationMs);
    const stop = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return {
    kc,
    simulator,
    done,
    close: async () => {
      await simulator?.close();
    },
  };
}
