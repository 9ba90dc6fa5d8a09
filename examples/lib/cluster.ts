/**
 * What every example shares: where the cluster is and how long to run.
 *
 *   node build/examples/<name>.js                       # the current kubeconfig context, or in-cluster in a pod
 *   node build/examples/<name>.js --simulator           # the built-in API-server simulator, seeded
 *   node build/examples/<name>.js --duration 10s        # stop after 10 s (default: Ctrl-C)
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from 'rxkube';
import { startApiServer, type ApiServer, type ApiServerOptions } from 'rxkube/testing';

/** Where an example runs and how it ends. */
export interface ExampleCluster {
  readonly kc: KubeConfig;
  /** The simulator, when `--simulator` was given. */
  readonly simulator: ApiServer | undefined;
  /** Resolves on Ctrl-C (SIGINT/SIGTERM) with `'signal'`, or with `'duration'` when `--duration` has passed. */
  readonly done: Promise<'signal' | 'duration'>;
  /** The values of the example's own flags (`--name value` or `--name=value`), defaults filled in. */
  readonly flags: Readonly<Record<string, string>>;
  /** Stops the simulator, if one was started. */
  close(): Promise<void>;
}

const USAGE = 'usage: [--simulator] [--duration <n>s|<n>ms]';

/** Parses `--duration 10s`, `--duration 500ms` or `--duration 3` (seconds). */
function parseDuration(text: string | undefined, usage: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(text ?? '');
  if (m === null) throw new TypeError(`--duration: expected e.g. 10s or 500ms, got ${JSON.stringify(text)}; ${usage}`);
  return Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
}

/**
 * Reads the example's flags, starts the simulator (seeded by `seed`) when
 * asked, or loads the cluster's configuration: in-cluster in a pod (from
 * `--service-account-dir` when the example takes that flag), else the
 * current kubeconfig context.
 *
 * @param argv the command-line arguments after the script.
 * @param seed fills the simulator with what the example needs to show something.
 * @param own the example's own flags and their defaults, e.g. `{ 'metrics-bind-address': ':8080' }`.
 * @param simulatorOptions what else the simulator needs, such as the CRDs the example's resources come from, and
 *   users known by their tokens with what they may do (`users` and `authorize`).
 * @returns the cluster, the flags, and a promise for when to stop.
 */
export async function exampleCluster(
  argv: readonly string[],
  seed: (server: ApiServer) => Promise<void>,
  own: Readonly<Record<string, string>> = {},
  simulatorOptions: Pick<ApiServerOptions, 'crds' | 'users' | 'authorize'> = {},
): Promise<ExampleCluster> {
  const usage = [USAGE, ...Object.entries(own).map(([name, value]) => `[--${name} <value, default ${JSON.stringify(value)}>]`)].join(' ');
  let simulated = false;
  let durationMs: number | undefined;
  const flags: Record<string, string> = { ...own };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? arg.slice(2, eq < 0 ? undefined : eq) : '';
    // A flag whose default is 'false' or 'true' may be given bare: `--metrics-secure` is `--metrics-secure=true`.
    const isSwitch = /^(true|false)$/.test(own[name] ?? '');
    const value = (): string => {
      if (isSwitch && eq < 0) return 'true';
      const v = eq < 0 ? argv[++i] : arg.slice(eq + 1);
      if (v === undefined) throw new TypeError(`--${name} needs a value; ${usage}`);
      return v;
    };
    if (arg === '--simulator') simulated = true;
    else if (name === 'duration') durationMs = parseDuration(value(), usage);
    else if (name !== '' && Object.hasOwn(own, name)) flags[name] = value();
    else throw new TypeError(`unknown argument ${JSON.stringify(arg)}; ${usage}`);
  }
  let simulator: ApiServer | undefined;
  let kc: KubeConfig;
  if (simulated) {
    // Users need the admin's token beside theirs.
    const token = simulatorOptions.users === undefined ? {} : { token: 'example-admin-token' };
    simulator = await startApiServer({ port: 0, bookmarkIntervalMs: 5_000, ...token, ...simulatorOptions });
    await seed(simulator);
    kc = simulator.kubeConfig();
  } else {
    const dir = flags['service-account-dir'];
    kc = loadKubeConfig(dir === undefined || dir === '' ? {} : { serviceAccountDir: dir });
  }
  const done = new Promise<'signal' | 'duration'>((resolve) => {
    const timer = durationMs === undefined ? undefined : setTimeout(() => resolve('duration'), durationMs);
    const stop = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      resolve('signal');
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return {
    kc,
    simulator,
    done,
    flags,
    close: async () => {
      await simulator?.close();
    },
  };
}

/**
 * A `<namespace>/<name>` flag's value, e.g. `--webhook-service=website-operator/website-operator-webhook`.
 *
 * @param flag the flag's name, for the message.
 * @param value what was given.
 * @returns the namespace and the name.
 */
export function namespacedName(flag: string, value: string | undefined): { namespace: string; name: string } {
  const m = /^([a-z0-9-]+)\/([a-z0-9-]+)$/.exec(value ?? '');
  if (m === null) throw new TypeError(`--${flag}: expected <namespace>/<name>, got ${JSON.stringify(value)}`);
  return { namespace: m[1] ?? '', name: m[2] ?? '' };
}
