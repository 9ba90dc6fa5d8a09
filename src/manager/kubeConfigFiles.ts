/**
 * Finding and reading kubeconfig files strictly: a file that is named but
 * missing or malformed, or no configuration at all, is one message naming
 * the file and what is wrong with it, before any request. client-node's
 * `loadFromDefault()` throws a stack trace for a missing or malformed file
 * and, with nothing found, falls back to `http://localhost:8080`, which on
 * almost every machine refuses and leaves a program retrying in silence
 * (semantics MG-11). Shared by `loadKubeConfig()` and `rxkube watch`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { MalformedDocumentError } from '../errors/MalformedDocumentError.js';

/** A kubeconfig that could not be used; the message is one line that names the file or setting. */
export class KubeConfigLoadError extends Error {
  override readonly name = 'KubeConfigLoadError';
}

/** A loaded kubeconfig and where it came from, for messages. */
export interface FoundKubeConfig {
  readonly kc: KubeConfig;
  /** `/path/to/config`, the files of KUBECONFIG, or `the pod's service account`. */
  readonly where: string;
}

/** The first line of an error's message. */
function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]?.trim() ?? '';
}

/**
 * Reads and parses one kubeconfig file; relative certificate and key paths
 * are taken relative to the file, as client-node's `loadFromFile` does.
 * @param from where the file's name came from, for messages (`--kubeconfig`, `KUBECONFIG`).
 */
export function readKubeConfigFile(path: string, from: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new KubeConfigLoadError(code === 'ENOENT' ? `${from}: ${path} does not exist` : `${from}: cannot read ${path}: ${firstLine(err)}`);
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    kc.makePathsAbsolute(dirname(path));
  } catch (err) {
    // Position and fixed reason only: the parser's message quotes the file's lines (tokens among them) and its error holds the whole file.
    throw new KubeConfigLoadError(`${from}: ${path} is not a valid kubeconfig: ${MalformedDocumentError.from(err).message}`);
  }
  return kc;
}

/**
 * The files of a KUBECONFIG list, merged as kubectl merges them: the first
 * file to name a cluster, user or context, or to set the current context,
 * wins. A missing file is an error (kubectl skips it), so a typo does not
 * quietly leave a cluster out.
 */
export function readKubeConfigList(list: string): FoundKubeConfig {
  const files = list.split(delimiter).filter((p) => p !== '');
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
  for (const file of files) {
    const next = readKubeConfigFile(file, 'KUBECONFIG');
    const has = (named: readonly { name: string }[], name: string): boolean => named.some((x) => x.name === name);
    for (const c of next.clusters) if (!has(kc.clusters, c.name)) kc.addCluster(c);
    for (const u of next.users) if (!has(kc.users, u.name)) kc.addUser(u);
    for (const c of next.contexts) if (!has(kc.contexts, c.name)) kc.addContext(c);
    if (!kc.getCurrentContext() && next.getCurrentContext()) kc.setCurrentContext(next.getCurrentContext());
  }
  return { kc, where: files.join(delimiter) };
}

/** ~/.kube/config. */
export function homeKubeConfigPath(): string {
  return join(homedir(), '.kube', 'config');
}

/** The home kubeconfig when it exists, else undefined. */
export function readHomeKubeConfig(): FoundKubeConfig | undefined {
  const home = homeKubeConfigPath();
  return existsSync(home) ? { kc: readKubeConfigFile(home, 'kubeconfig'), where: home } : undefined;
}

/**
 * Makes `context` (else the kubeconfig's current context) the one to use,
 * and checks that it names a cluster the kubeconfig defines.
 * @param flag how the caller names the context setting in messages (`--context`, `option "context"`).
 */
export function selectContext(found: FoundKubeConfig, context: string | undefined, flag: string): KubeConfig {
  const { kc, where } = found;
  const names = kc.getContexts().map((ctx) => ctx.name);
  const has = `(it has: ${names.join(', ') || 'none'})`;
  if (context !== undefined) {
    if (!names.includes(context)) throw new KubeConfigLoadError(`${flag}: no context ${JSON.stringify(context)} in the kubeconfig ${has}`);
    kc.setCurrentContext(context);
  }
  const current = kc.getCurrentContext();
  if (!current) throw new KubeConfigLoadError(`${where} sets no current-context; choose one with ${flag} ${has}`);
  const ctx = kc.getContextObject(current);
  if (ctx === null) throw new KubeConfigLoadError(`${where}: the current-context ${JSON.stringify(current)} is not one of its contexts ${has}`);
  if (kc.getCluster(ctx.cluster) === null) throw new KubeConfigLoadError(`${where}: context ${JSON.stringify(current)} names cluster ${JSON.stringify(ctx.cluster)}, which it does not define`);
  return kc;
}
