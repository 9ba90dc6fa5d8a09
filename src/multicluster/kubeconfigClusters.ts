import { readFileSync, watch as watchDir } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { KubeConfig, type Context } from '@kubernetes/client-node';
import { concatMap, debounceTime, defer, merge, NEVER, Observable, shareReplay, startWith } from 'rxjs';
import { MalformedDocumentError } from '../errors/MalformedDocumentError.js';
import { reportError } from '../errors/reportError.js';
import { booleanOption, checkOptionNames, functionOption, numberOption, describeValue, optionNames } from '../options/validate.js';
import type { Cluster, ClusterProvider } from './types.js';
import { timerDelay } from '../options/timerDelay.js';

/**
 * Options of {@link kubeconfigClusters}.
 *
 * ## Example
 * ```ts
 * import { kubeconfigClusters } from 'rxkube';
 * import { type KubeconfigClustersOptions } from 'rxkube/core';
 *
 * const opts: KubeconfigClustersOptions = { path: '/etc/fleet/kubeconfig', contexts: (ctx) => ctx.name.startsWith('prod-') };
 * const clusters = kubeconfigClusters(opts);
 * ```
 */
export interface KubeconfigClustersOptions {
  /**
   * The kubeconfig file, or files merged as kubectl merges them (the first
   * file that names a cluster, user or context wins).
   * @default the files of $KUBECONFIG, else ~/.kube/config
   */
  readonly path?: string | readonly string[];
  /**
   * Which contexts are clusters: a list of names (a name missing from the
   * files is reported at each read and skipped, since it may yet be added),
   * or a predicate on each context.
   * @default every context
   */
  readonly contexts?: readonly string[] | ((context: Context) => boolean);
  /** Re-read the files when they change (their directories are watched, so editors that replace a file are seen too). @default true */
  readonly watch?: boolean;
  /** How long the files must be quiet after a change before they are re-read, in ms, so a file is not read half-written. @default 200 */
  readonly debounceMs?: number;
  /** Receives read errors (a missing or malformed file): the last set is kept meanwhile. @default reportError (stderr, rate-limited) */
  readonly onError?: (err: Error) => void;
}

const OPTION_NAMES = optionNames<KubeconfigClustersOptions>({ path: true, contexts: true, watch: true, debounceMs: true, onError: true });

/** kubectl's choice of files: $KUBECONFIG's list, else ~/.kube/config. */
function defaultPaths(): string[] {
  const env = process.env['KUBECONFIG'];
  if (env !== undefined && env !== '') return env.split(delimiter).filter((p) => p !== '');
  return [join(homedir(), '.kube', 'config')];
}

/**
 * One file, as client-node's `loadFromFile` reads it, except that a file
 * that does not parse is a `MalformedDocumentError` naming the file and the
 * position: the parser's own error quotes the file's lines and holds all of
 * it, credentials included.
 */
function loadFile(path: string): KubeConfig {
  const text = readFileSync(path, 'utf8');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (err) {
    const safe = MalformedDocumentError.from(err);
    throw new MalformedDocumentError(`${path} is not a valid kubeconfig: ${safe.message}`, safe.line, safe.column);
  }
  kc.makePathsAbsolute(dirname(path));
  return kc;
}

/** The files merged as kubectl does: names already taken by an earlier file are left out. */
function load(paths: readonly string[]): KubeConfig {
  const merged = loadFile(paths[0] as string);
  for (const path of paths.slice(1)) {
    const next = loadFile(path);
    const has = (list: readonly { name: string }[], name: string): boolean => list.some((x) => x.name === name);
    for (const c of next.clusters) if (!has(merged.clusters, c.name)) merged.addCluster(c);
    for (const u of next.users) if (!has(merged.users, u.name)) merged.addUser(u);
    for (const c of next.contexts) if (!has(merged.contexts, c.name)) merged.addContext(c);
  }
  return merged;
}

/** One context of a kubeconfig as a KubeConfig of its own, whose current context it is. */
function single(kc: KubeConfig, context: Context): KubeConfig {
  const cluster = kc.getCluster(context.cluster);
  if (cluster === null) throw new Error(`context ${JSON.stringify(context.name)} names cluster ${JSON.stringify(context.cluster)}, which the kubeconfig does not define`);
  const user = kc.getUser(context.user);
  const one = new KubeConfig();
  one.loadFromOptions({ clusters: [cluster], users: user === null ? [] : [user], contexts: [context], currentContext: context.name });
  return one;
}

/**
 * The contexts of a kubeconfig as a fleet: each context (all of them, or
 * those chosen by name or predicate) is a cluster named after it, with a
 * KubeConfig whose current context it is. The files are re-read when they
 * change (watched, then read after `debounceMs` of quiet), so contexts that
 * are added, removed or edited join, leave or are replaced while the
 * program runs. A file that cannot be read is reported and the last set
 * kept; if none could be read yet, the set is empty until one can. The
 * provider is shared: one watcher for every subscriber (MC-1).
 *
 * ## Example
 * ```ts
 * import { kubeconfigClusters, kubeSource, multiClusterInformer, unwrapTombstone } from 'rxkube';
 *
 * const clusters = kubeconfigClusters({ contexts: ['kind-east', 'kind-west'] });
 * const pods = multiClusterInformer(clusters, (c) => kubeSource(c.kubeConfig, 'v1/pods'));
 * pods.subscribe((e) => console.log(e.cluster, e.type, unwrapTombstone(e.obj)?.metadata?.name));
 * ```
 *
 * @param opts which files, which contexts, and whether to follow changes.
 * @returns the provider, reading nothing until subscribed.
 * @throws {TypeError} for an option that is not valid.
 */
export function kubeconfigClusters(opts: KubeconfigClustersOptions = {}): ClusterProvider {
  const where = 'kubeconfigClusters';
  const o = checkOptionNames(where, opts, OPTION_NAMES) as KubeconfigClustersOptions;
  const paths = o.path === undefined ? defaultPaths() : typeof o.path === 'string' ? [o.path] : [...(o.path as readonly string[])];
  if (paths.length === 0 || paths.some((p) => typeof p !== 'string' || p === '')) throw new TypeError(`${where}: option "path" must be a file path or a non-empty list of them, got ${describeValue(o.path)}`);
  const contexts = o.contexts;
  if (contexts !== undefined && typeof contexts !== 'function' && !(Array.isArray(contexts) && contexts.every((c) => typeof c === 'string' && c !== ''))) {
    throw new TypeError(`${where}: option "contexts" must be a list of context names or a predicate, got ${describeValue(contexts)}`);
  }
  const watch = booleanOption(where, 'watch', o.watch, true);
  const debounceMs = numberOption(where, 'debounceMs', o.debounceMs, 200);
  const report = functionOption<(err: Error) => void>(where, 'onError', o.onError) ?? reportError;
  const chosen = (ctx: Context): boolean => (contexts === undefined ? true : typeof contexts === 'function' ? contexts(ctx) : contexts.includes(ctx.name));

  const read = (): Cluster[] => {
    const kc = load(paths);
    const out: Cluster[] = [];
    for (const ctx of kc.getContexts()) {
      let keep: boolean;
      try {
        keep = chosen(ctx);
      } catch (err) {
        report(new Error(`${where}: the contexts predicate threw for ${JSON.stringify(ctx.name)}; it is left out`, { cause: err }));
        continue;
      }
      if (!keep) continue;
      try {
        out.push({ name: ctx.name, kubeConfig: single(kc, ctx) });
      } catch (err) {
        report(new Error(`${where}: ${(err as Error).message}; it is left out`, { cause: err }));
      }
    }
    if (Array.isArray(contexts)) {
      for (const name of contexts) if (!out.some((c) => c.name === name)) report(new Error(`${where}: no context ${JSON.stringify(name)} in ${paths.join(delimiter)}`));
    }
    return out;
  };

  // Directories, not files: an editor or `kubectl config` that writes a new file and renames it over the old one is seen.
  const byDir = new Map<string, Set<string>>();
  for (const p of paths) byDir.set(dirname(p), (byDir.get(dirname(p)) ?? new Set()).add(basename(p)));
  const changed = (dir: string, names: Set<string>): Observable<void> =>
    new Observable<void>((subscriber) => {
      try {
        const w = watchDir(dir, (_event, file) => {
          if (file === null || names.has(file.toString())) subscriber.next();
        });
        w.on('error', (err) => report(new Error(`${where}: watching ${dir} failed: ${err.message}; changes are no longer followed`, { cause: err })));
        return () => w.close();
      } catch (err) {
        report(new Error(`${where}: cannot watch ${dir}: ${(err as Error).message}; changes there are not followed`, { cause: err }));
        return undefined;
      }
    });

  return defer(() => {
    let emitted = false;
    const changes = watch ? merge(...[...byDir].map(([dir, names]) => changed(dir, names))) : NEVER; // never completes, so the refcount reset lets a later run read the files anew
    return changes.pipe(
      debounceTime(timerDelay(debounceMs)),
      startWith(undefined),
      concatMap(() => {
        try {
          const set = read();
          emitted = true;
          return [set];
        } catch (err) {
          report(new Error(`${where}: could not read ${paths.join(delimiter)}: ${(err as Error).message.replace(/\s+/g, ' ')}; ${emitted ? 'the last set is kept' : 'no clusters until it can be read'}`, { cause: err }));
          if (emitted) return [];
          emitted = true;
          return [[]];
        }
      }),
    );
  }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
}
