/**
 * `rxkube watch <resource>`: an informer-backed view of one resource. On a
 * TTY, a live screen; in a pipe, the table once synced and then one line per
 * change; `-o json` writes one JSON line per event; `--once` prints the
 * synced cache and exits. With several `--context` (or `--all-contexts`), one
 * multi-cluster informer over those contexts, in the same modes with a
 * CLUSTER column: a cluster that cannot be reached is shown as such and does
 * not hold up the others; with `--once` the command then exits 1. Every way
 * out (Ctrl-C, SIGTERM, a closed pipe, a fatal error) unsubscribes the
 * informer and closes the simulator, so the process ends with no socket left open.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { ClusterError } from '../multicluster/ClusterError.js';
import { kubeconfigClusters } from '../multicluster/kubeconfigClusters.js';
import { multiClusterInformer } from '../multicluster/multiClusterInformer.js';
import type { ClusterEvent } from '../multicluster/types.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { kubeSource } from '../sources/kubeSource.js';
import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKey, parseFieldSelector, parseLabelSelector, unwrapTombstone } from '../store/index.js';
import type { KubeObject, ReadonlyIndexer } from '../store/types.js';
import { statusOf } from './columns.js';
import { loadKubeConfig, useContext } from './kubeconfig.js';
import { resolveResource, type CliResource } from './resources.js';
import { WatchSession } from './session.js';
import { resolveWatched } from './watchResource.js';
import { startSimulator, type Simulator } from './simulator.js';
import { coloursFor, errorLine, liveLoop, syncedOrInterrupted, writeText } from './terminal.js';
import { printable, printableJson } from '../errors/printable.js';
import { jsonText } from '../store/jsonText.js';
import { UsageError } from './usage.js';
import { describeReflector, renderView, type FleetWatch } from './view.js';
import type { WatchFlags } from './watchFlags.js';
import { syncedOf } from '../informer/syncedOf.js';

/** Line width when stdout is not a terminal. */
const PIPE_WIDTH = 120;

/**
 * Where the cluster is and what is watched there: the simulator (serving the
 * resource as named), or a kubeconfig, where a name that is not built in is
 * resolved through discovery.
 */
async function connect(name: string, flags: WatchFlags): Promise<{ kc: KubeConfig; resource: CliResource; simulator: Simulator | undefined }> {
  if (flags.simulator === true) {
    if (flags.kubeconfig !== undefined || flags.context !== undefined) throw new UsageError('--simulator cannot be combined with --kubeconfig or --context');
    const resource = checked(resolveResource(name), flags);
    const simulator = await startSimulator(resource, { objects: flags.objects, churnPerSecond: flags.once === true ? 0 : flags.churn, seed: flags.seed });
    return { kc: simulator.kc, resource, simulator };
  }
  const kc = useContext(loadKubeConfig(flags.kubeconfig), flags.context?.[0]);
  return { kc, resource: checked(await resolveWatched(kc, name), flags), simulator: undefined };
}

/** The flags that depend on the resource, checked before anything is watched. */
function checked(resource: CliResource, flags: WatchFlags): CliResource {
  // kubectl ignores -n here; the library refuses a namespace on a cluster-scoped resource, and so does the command (X-34).
  if (!resource.namespaced && flags.namespace !== undefined) throw new UsageError(`-n/--namespace: ${resource.ref} is cluster-scoped; leave -n out`);
  return resource;
}

/** The namespace to watch: `-A` all, `-n` that one, else the context's (kubectl's rule), `default` on the simulator. */
function namespaceOf(resource: CliResource, flags: WatchFlags, kc: KubeConfig): string | undefined {
  if (!resource.namespaced || flags.allNamespaces === true) return undefined;
  if (flags.namespace !== undefined) return flags.namespace;
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}

/**
 * One JSON line for an event: `{"type":"add","key":"ns/name","initial":true,"object":{…}}`;
 * a delete discovered by a relist carries `"finalStateUnknown":true` (and
 * `"object":null` when its last state is unknown too). An event of one of
 * several clusters carries its `"cluster"` after the type (and a delete the
 * `reason` when its cluster left or failed). Characters a terminal would act
 * on are `\u` escapes (still JSON), and an object nested deeper than
 * JSON.stringify can go is written all the same.
 *
 * @param e the event.
 * @returns the line, without its newline.
 */
export function eventJson(e: InformerEvent<KubeObject> | ClusterEvent<KubeObject>): string {
  const head = { type: e.type, ...('cluster' in e ? { cluster: e.cluster } : {}), key: deletionHandlingMetaNamespaceKey(e.obj) };
  if (e.type === 'add') return printableJson(jsonText({ ...head, initial: e.isInInitialList, object: e.obj }));
  if (e.type === 'update') return printableJson(jsonText({ ...head, object: e.obj }));
  const tombstone = e.obj instanceof DeletedFinalStateUnknown;
  const line = jsonText({
    ...head,
    object: unwrapTombstone(e.obj) ?? null,
    ...(tombstone ? { finalStateUnknown: true } : {}),
    ...('reason' in e && e.reason !== 'deleted' ? { reason: e.reason } : {}),
  });
  return printableJson(line);
}

/** A change as a line of a pipe: `update  ns/name  Running`, the cluster after the type over several. */
function changeLine(kind: string, e: InformerEvent<KubeObject> | ClusterEvent<KubeObject>): string {
  const obj = unwrapTombstone(e.obj);
  const reason = 'reason' in e && e.reason !== 'deleted' ? ` (${e.reason})` : '';
  const status = e.type === 'delete' || obj === undefined ? `Deleted${reason}` : statusOf(kind, obj);
  const cluster = 'cluster' in e ? `  ${printable(e.cluster)}` : '';
  return `${e.type.padEnd(6)}${cluster}  ${printable(deletionHandlingMetaNamespaceKey(e.obj))}  ${printable(status)}`;
}

/** The header and every row once, as wide as the terminal (a pipe, or `--once`). */
function printAll(w: WatchSession | FleetWatch): void {
  const out = process.stdout;
  writeText(out, `${renderView(w, { colors: coloursFor(out), width: out.columns ?? PIPE_WIDTH, height: Number.MAX_SAFE_INTEGER, now: Date.now() })}\n`);
}

/** `--once -o json`: the cache as initial adds, by key; over several clusters each with its cluster. */
function printCache(store: Pick<ReadonlyIndexer<KubeObject>, 'getByKey' | 'listKeys'>, clusters: boolean): void {
  for (const key of store.listKeys().sort()) {
    const obj = store.getByKey(key);
    const cluster = clusters ? { cluster: key.slice(0, key.indexOf('/')), key } : {};
    if (obj !== undefined) writeText(process.stdout, `${eventJson({ type: 'add', obj, isInInitialList: true, ...cluster })}\n`);
  }
}

/**
 * Runs `rxkube watch`.
 *
 * @param name the resource as typed.
 * @param flags the parsed flags.
 * @returns the exit code.
 */
export async function runWatch(name: string, flags: WatchFlags): Promise<number> {
  if (flags.allNamespaces === true && flags.namespace !== undefined) throw new UsageError('-n/--namespace and -A/--all-namespaces cannot be combined');
  // Named before anything starts: the simulator is not worth starting for a selector the server would refuse.
  if (flags.selector !== undefined) parseLabelSelector(flags.selector);
  if (flags.fieldSelector !== undefined) parseFieldSelector(flags.fieldSelector);
  // Several clusters may not agree on what a short name means: there, names are resolved offline only.
  if (flags.allContexts === true || (flags.context?.length ?? 0) > 1) return runWatchClusters(checked(resolveResource(name), flags), flags);
  const { kc, resource, simulator } = await connect(name, flags);
  try {
    const session = new WatchSession({
      kc,
      resource,
      namespace: namespaceOf(resource, flags, kc),
      labelSelector: flags.selector,
      fieldSelector: flags.fieldSelector,
      ...(flags.fifo === undefined ? {} : { fifo: flags.fifo }),
      ...(simulator === undefined ? {} : { backoff: { initialMs: 200, maxMs: 2_000 } }),
    });
    try {
      return flags.once === true ? await once(session, flags) : await live(session, flags, simulator);
    } finally {
      session.stop();
    }
  } finally {
    await simulator?.close();
  }
}

/** `--once`: wait for the sync (saying on stderr what goes wrong meanwhile), print the cache (table or JSON lines), stop. */
async function once(session: WatchSession, flags: WatchFlags): Promise<number> {
  let fatal: Error | undefined;
  session.start(
    () => {},
    (err, isFatal) => {
      if (isFatal) fatal = err;
      else writeText(process.stderr, `${coloursFor(process.stderr).dim(errorLine(err))}\n`);
    },
  );
  try {
    if (!(await syncedOrInterrupted(session.informer, flags.timeout))) return 130;
  } catch (err) {
    // A timeout's own message names the informer and its last error; an error that ended the informer does not.
    writeText(process.stderr, `error: ${printable(fatal === undefined ? (err as Error).message : `${session.informer.name} did not sync: ${fatal.message}`, { newlines: true })}\n`);
    return 1;
  }
  if (flags.output === 'json') printCache(session.informer.store, false);
  else printAll(session);
  return 0;
}

/** Until Ctrl-C: the live screen, JSON lines, or (in a pipe) the table and then a line per change. */
async function live(session: WatchSession, flags: WatchFlags, simulator: Simulator | undefined): Promise<number> {
  const out = process.stdout;
  const err = process.stderr;
  const c = coloursFor(out);
  const loop = liveLoop(out, out.isTTY === true && flags.output === 'table', (width, height) => renderView(session, { colors: c, width, height, now: Date.now() }));
  const pipe = !loop.screen && flags.output === 'table';
  let fatal: Error | undefined;
  let synced = false;
  let lastState = '';
  session.start(
    (e) => {
      if (flags.output === 'json') writeText(out, `${eventJson(e)}\n`);
      else if (loop.screen) loop.redraw();
      else if (synced) writeText(out, `${changeLine(session.resource.kind, e)}\n`);
    },
    (error, isFatal) => {
      if (isFatal) {
        fatal = error;
        loop.ended.abort();
      } else if (!loop.screen) {
        writeText(err, `${c.dim(errorLine(error))}\n`);
      } else loop.redraw();
    },
  );
  const subs = [
    syncedOf(session.informer).subscribe((isSynced) => {
      if (!isSynced || synced) return;
      synced = true;
      simulator?.startChurn();
      if (pipe) printAll(session);
    }),
    // A pipe still hears what the reflector does (relists, backoffs), on stderr so stdout stays data.
    session.informer.status$.subscribe((s) => {
      const state = describeReflector(s.reflector).replace(/ at rv \d+$/, '');
      if (state === lastState) return;
      lastState = state;
      if (pipe && synced) writeText(err, `${c.dim(`reflector ${printable(state)}`)}\n`);
    }),
  ];
  await loop.run();
  for (const s of subs) s.unsubscribe();
  if (fatal === undefined) return 0;
  writeText(err, `error: ${printable(`${session.informer.name}: ${fatal.message}`, { newlines: true })}\n`);
  return 1;
}

/** `rxkube watch` over several contexts: one multi-cluster informer, the resource resolved offline. */
async function runWatchClusters(resource: CliResource, flags: WatchFlags): Promise<number> {
  if (flags.simulator === true) throw new UsageError('--simulator cannot be combined with several --context or --all-contexts');
  // The contexts asked for, checked against the kubeconfig before anything starts.
  if (flags.allContexts === true && flags.context !== undefined) throw new UsageError('--all-contexts and --context cannot be combined');
  const { kc } = loadKubeConfig(flags.kubeconfig);
  const names = kc.getContexts().map((ctx) => ctx.name);
  if (flags.allContexts === true && names.length === 0) throw new UsageError('--all-contexts: the kubeconfig has no contexts');
  for (const name of flags.context ?? []) {
    if (!names.includes(name)) throw new UsageError(`--context: no context ${JSON.stringify(name)} in the kubeconfig (it has: ${names.join(', ') || 'none'})`);
  }
  const twice = (flags.context ?? []).find((name, i, all) => all.indexOf(name) !== i);
  if (twice !== undefined) throw new UsageError(`--context: ${JSON.stringify(twice)} is given twice`);
  const errors: string[] = [];
  const clusters = kubeconfigClusters({
    ...(flags.kubeconfig === undefined ? {} : { path: flags.kubeconfig }),
    ...(flags.allContexts === true ? {} : { contexts: flags.context }),
    watch: flags.once !== true,
    onError: (err) => errors.push(printable(err.message.replace(/[ \t\n\r]+/g, ' '))),
  });
  const informer = multiClusterInformer<KubeObject>(
    clusters,
    (c) => {
      const namespace = namespaceOf(resource, flags, c.kubeConfig);
      return kubeSource(c.kubeConfig, resource.ref as 'v1/pods', { namespace, labelSelector: flags.selector, fieldSelector: flags.fieldSelector }) as never;
    },
    { name: resource.ref, onError: (err) => errors.push(errorLine(err)), ...(flags.fifo === undefined ? {} : { fifo: flags.fifo }) },
  );
  const w: FleetWatch = {
    informer,
    resource,
    namespace: resource.namespaced && flags.allNamespaces !== true ? flags.namespace : undefined,
    allNamespaces: flags.allNamespaces === true,
    startedAt: Date.now(),
    syncedAfterMs: undefined,
    status: undefined,
    recent: new Map(),
  };
  const subs: Subscription[] = [informer.status$.subscribe((s) => (w.status = s))];
  try {
    return flags.once === true ? await onceClusters(w, flags, subs, errors) : await liveClusters(w, flags, subs, errors);
  } finally {
    for (const s of subs) s.unsubscribe();
  }
}

/** `--once` over several clusters: wait for each to sync or be found unreachable, print the cache, stop. */
async function onceClusters(w: FleetWatch, flags: WatchFlags, subs: Subscription[], errors: string[]): Promise<number> {
  let fatal: Error | undefined;
  subs.push(w.informer.subscribe({ error: (err: unknown) => (fatal = err as Error) }));
  try {
    if (!(await syncedOrInterrupted(w.informer, flags.timeout))) return 130;
    w.syncedAfterMs = Date.now() - w.startedAt;
  } catch (err) {
    writeText(process.stderr, `error: ${printable(fatal?.message ?? (err as Error).message, { newlines: true })}\n`);
    return 1;
  }
  const unsynced = (w.status?.clusters ?? []).filter((c) => c.state !== 'synced');
  for (const c of unsynced) writeText(process.stderr, `error: ${printable(c.lastError?.message ?? new ClusterError(c.name, c.state).message, { newlines: true })} (${c.state})\n`);
  if (flags.output === 'json') printCache(w.informer.store, true);
  else printAll(w);
  if (errors.length > 0 && unsynced.length === 0) for (const e of errors.splice(0)) writeText(process.stderr, `${coloursFor(process.stderr).dim(e)}\n`);
  return unsynced.length > 0 ? 1 : 0;
}

/** Until Ctrl-C over several clusters: the live screen, JSON lines, or (in a pipe) the table and then a line per change. */
async function liveClusters(w: FleetWatch, flags: WatchFlags, subs: Subscription[], errors: string[]): Promise<number> {
  const out = process.stdout;
  const c = coloursFor(out);
  const loop = liveLoop(out, out.isTTY === true && flags.output === 'table', (width, height) => renderView(w, { colors: c, width, height, now: Date.now() }));
  let fatal: Error | undefined;
  // Errors go to stderr as they come in a pipe; on a TTY the header shows each cluster's last one.
  const flushErrors = (): void => {
    if (loop.screen) errors.length = 0;
    for (const e of errors.splice(0)) writeText(process.stderr, `${coloursFor(process.stderr).dim(e)}\n`);
  };
  subs.push(
    w.informer.subscribe({
      next: (e) => {
        flushErrors();
        if (!(e.type === 'add' && e.isInInitialList)) {
          w.recent.delete(e.key);
          const obj = unwrapTombstone(e.obj);
          if (obj !== undefined) w.recent.set(e.key, { type: e.type, at: Date.now(), obj });
          if (w.recent.size > 1_000) w.recent.delete(w.recent.keys().next().value as string);
        }
        if (flags.output === 'json') writeText(out, `${eventJson(e)}\n`);
        else if (loop.screen) loop.redraw();
        else if (w.syncedAfterMs !== undefined) writeText(out, `${changeLine(w.resource.kind, e)}\n`);
      },
      error: (err: unknown) => {
        fatal = err as Error;
        loop.ended.abort();
      },
    }),
    syncedOf(w.informer).subscribe((synced) => {
      if (!synced || w.syncedAfterMs !== undefined) return;
      w.syncedAfterMs = Date.now() - w.startedAt;
      if (!loop.screen && flags.output === 'table') printAll(w);
      flushErrors();
    }),
    w.informer.status$.subscribe(() => {
      if (w.syncedAfterMs !== undefined) flushErrors();
      loop.redraw();
    }),
  );
  await loop.run();
  if (fatal === undefined) return 0;
  writeText(process.stderr, `error: ${printable(fatal.message, { newlines: true })}\n`);
  return 1;
}
