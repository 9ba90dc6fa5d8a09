/**
 * Where `rxkube watch` finds its cluster: `--kubeconfig`, else the files of
 * $KUBECONFIG, else ~/.kube/config, else the pod's service account (in a
 * cluster). Anything missing or unreadable is one line naming the file and
 * what is wrong with it, before any request: client-node would throw a stack
 * trace for a missing or malformed file, and with no file at all it falls
 * back to `http://localhost:8080` (the API server's old insecure port),
 * which on almost every machine refuses, leaving the command retrying
 * (semantics X-34).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from './usage.js';

/** The pod's service-account token, the file client-go's in-cluster config reads. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The first line of an error's message (js-yaml adds a snippet of the file after it). */
function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]?.trim() ?? '';
}

/** Reads and parses one file; `from` says where its name came from (`--kubeconfig`, `KUBECONFIG`). */
function loadFile(path: string, from: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `${from}: ${path} does not exist` : `${from}: cannot read ${path}: ${firstLine(err)}`);
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    // Relative certificate and key paths are relative to the file, as client-node's loadFromFile does it.
    kc.makePathsAbsolute(join(path, '..'));
  } catch (err) {
    throw new UsageError(`${from}: ${path} is not a valid kubeconfig: ${firstLine(err)}`);
  }
  return kc;
}

/** A loaded kubeconfig and where it came from, for messages. */
export interface LoadedKubeConfig {
  readonly kc: KubeConfig;
  /** `/path/to/config`, or the files of KUBECONFIG, or `the pod's service account`. */
  readonly where: string;
}

/**
 * Loads the kubeconfig the command uses, as kubectl chooses it.
 *
 * @param path `--kubeconfig`, if given.
 * @returns the loaded configuration and where it came from.
 * @throws {UsageError} when no configuration is found, or a file named is missing or malformed.
 */
export function loadKubeConfig(path: string | undefined): LoadedKubeConfig {
  if (path !== undefined) return { kc: loadFile(path, '--kubeconfig'), where: path };
  const env = process.env['KUBECONFIG'];
  if (env !== undefined && env !== '') {
    // kubectl skips a missing file in the list; here it is an error, as in kubeconfigClusters, so a typo in
    // KUBECONFIG does not quietly leave a cluster out.
    const files = env.split(delimiter).filter((p) => p !== '');
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    // Merged as kubectl merges them: the first file to name a cluster, user or context, or to set the current context, wins.
    for (const file of files) {
      const next = loadFile(file, 'KUBECONFIG');
      const has = (list: readonly { name: string }[], name: string): boolean => list.some((x) => x.name === name);
      for (const c of next.clusters) if (!has(kc.clusters, c.name)) kc.addCluster(c);
      for (const u of next.users) if (!has(kc.users, u.name)) kc.addUser(u);
      for (const c of next.contexts) if (!has(kc.contexts, c.name)) kc.addContext(c);
      if (!kc.getCurrentContext() && next.getCurrentContext()) kc.setCurrentContext(next.getCurrentContext());
    }
    return { kc, where: files.join(delimiter) };
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return { kc: loadFile(home, 'kubeconfig'), where: home };
  // client-go's rule for running in a pod: the service's address in the environment and the account's token on disk.
  if ((process.env['KUBERNETES_SERVICE_HOST'] ?? '') !== '' && (process.env['KUBERNETES_SERVICE_PORT'] ?? '') !== '' && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    const kc = new KubeConfig();
    kc.loadFromCluster();
    return { kc, where: "the pod's service account" };
  }
  throw new UsageError(`no kubeconfig: ${home} does not exist and KUBECONFIG is not set; pass --kubeconfig <file>, or try --simulator`);
}

/**
 * Makes `context` (else the kubeconfig's current context) the one to use, and
 * checks that it names a cluster.
 *
 * @param loaded the kubeconfig.
 * @param context `--context`, if given.
 * @returns the kubeconfig, its current context set.
 * @throws {UsageError} for a context the kubeconfig does not have, or none at all.
 */
export function useContext(loaded: LoadedKubeConfig, context: string | undefined): KubeConfig {
  const { kc, where } = loaded;
  const names = kc.getContexts().map((ctx) => ctx.name);
  const has = `(it has: ${names.join(', ') || 'none'})`;
  if (context !== undefined) {
    if (!names.includes(context)) throw new UsageError(`--context: no context ${JSON.stringify(context)} in the kubeconfig ${has}`);
    kc.setCurrentContext(context);
  }
  const current = kc.getCurrentContext();
  if (!current) throw new UsageError(`${where} sets no current-context; pass --context <name> ${has}`);
  const ctx = kc.getContextObject(current);
  if (ctx === null) throw new UsageError(`${where}: the current-context ${JSON.stringify(current)} is not one of its contexts ${has}`);
  if (kc.getCluster(ctx.cluster) === null) throw new UsageError(`${where}: context ${JSON.stringify(current)} names cluster ${JSON.stringify(ctx.cluster)}, which it does not define`);
  return kc;
}
