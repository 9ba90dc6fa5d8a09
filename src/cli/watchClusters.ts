/**
 * `rxkube watch <resource> --context a --context b` (or `--all-contexts`):
 * one multi-cluster informer over the chosen contexts of the kubeconfig,
 * shown with a CLUSTER column. The same modes as one cluster: a live screen
 * on a TTY, the table once synced and a line per change in a pipe, JSON
 * lines with `-o json` (each with its `cluster`), the synced cache with
 * `--once`. A cluster that cannot be reached is shown as such and does not
 * hold up the others; with `--once` the command then exits 1.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { ClusterError } from '../multicluster/ClusterError.js';
import { kubeconfigClusters } from '../multicluster/kubeconfigClusters.js';
import { multiClusterInformer } from '../multicluster/multiClusterInformer.js';
import type { ClusterEvent } from '../multicluster/types.js';
import { kubeSource } from '../sources/kubeSource.js';
import { DeletedFinalStateUnknown, unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import { deletionHandlingMetaNamespaceKey } from '../store/keys.js';
import type { KubeObject } from '../store/types.js';
import { statusOf } from './columns.js';
import { renderFleetHeader, renderFleetTable, renderFleetView, type FleetWatch } from './fleetView.js';
import type { CliResource } from './resources.js';
import { coloursFor, errorLine, interrupted, liveScreen, writeText } from './terminal.js';
import { printable, printableJson } from '../errors/printable.js';
import { jsonText } from '../store/jsonText.js';
import { loadKubeConfig } from './kubeconfig.js';
import { UsageError } from './usage.js';
import type { WatchFlags } from './watchFlags.js';
import { syncedOf } from '../informer/syncedOf.js';

const PIPE_WIDTH = 120;
const FRAME_MS = 200;

/**
 * One JSON line for an event of one cluster: `{"type":"add","cluster":"eu","key":"ns/name","initial":true,"object":{…}}`,
 * as for one cluster with the cluster added (and a delete's `reason` when its cluster left or failed).
 *
 * @param e the event.
 * @returns the line, without its newline.
 */
export function clusterEventJson(e: ClusterEvent<KubeObject>): string {
  const key = deletionHandlingMetaNamespaceKey(e.obj);
  if (e.type === 'add') return printableJson(jsonText({ type: 'add', cluster: e.cluster, key, initial: e.isInInitialList, object: e.obj }));
  if (e.type === 'update') return printableJson(jsonText({ type: 'update', cluster: e.cluster, key, object: e.obj }));
  const tombstone = e.obj instanceof DeletedFinalStateUnknown;
  const line = jsonText({
    type: 'delete',
    cluster: e.cluster,
    key,
    object: unwrapTombstone(e.obj) ?? null,
    ...(tombstone ? { finalStateUnknown: true } : {}),
    ...(e.reason === 'deleted' ? {} : { reason: e.reason }),
  });
  return printableJson(line);
}

/** The contexts asked for, checked against the kubeconfig before anything starts. */
function checkContexts(flags: WatchFlags): void {
  if (flags.allContexts === true && flags.context !== undefined) throw new UsageError('--all-contexts and --context cannot be combined');
  const { kc } = loadKubeConfig(flags.kubeconfig);
  const names = kc.getContexts().map((ctx) => ctx.name);
  if (flags.allContexts === true && names.length === 0) throw new UsageError('--all-contexts: the kubeconfig has no contexts');
  for (const name of flags.context ?? []) {
    if (!names.includes(name)) throw new UsageError(`--context: no context ${JSON.stringify(name)} in the kubeconfig (it has: ${names.join(', ') || 'none'})`);
  }
  const twice = (flags.context ?? []).find((name, i, all) => all.indexOf(name) !== i);
  if (twice !== undefined) throw new UsageError(`--context: ${JSON.stringify(twice)} is given twice`);
}

/**
 * Runs `rxkube watch` over several contexts.
 *
 * @param resource the resource, resolved.
 * @param flags the parsed flags (selectors already checked).
 * @returns the exit code.
 */
export async function runWatchClusters(resource: CliResource, flags: WatchFlags): Promise<number> {
  if (flags.simulator === true) throw new UsageError('--simulator cannot be combined with several --context or --all-contexts');
  checkContexts(flags);
  const errors: string[] = [];
  const clusters = kubeconfigClusters({
    ...(flags.kubeconfig === undefined ? {} : { path: flags.kubeconfig }),
    ...(flags.allContexts === true ? {} : { contexts: flags.context }),
    watch: flags.once !== true,
    onError: (err) => errors.push(printable(err.message.replace(/[ \t\n\r]+/g, ' '))),
  });
  const namespaceOf = (kc: KubeConfig): string | undefined => {
    if (!resource.namespaced || flags.allNamespaces === true) return undefined;
    return flags.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  };
  const informer = multiClusterInformer<KubeObject>(
    clusters,
    (c) => {
      const namespace = namespaceOf(c.kubeConfig);
      return kubeSource(c.kubeConfig, resource.ref as 'v1/pods', {
        ...(namespace === undefined ? {} : { namespace }),
        ...(flags.selector === undefined ? {} : { labelSelector: flags.selector }),
        ...(flags.fieldSelector === undefined ? {} : { fieldSelector: flags.fieldSelector }),
      }) as never;
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
    return flags.once === true ? await once(w, flags, subs, errors) : await live(w, flags, subs, errors);
  } finally {
    for (const s of subs) s.unsubscribe();
  }
}

/** `--once`: wait for every cluster to sync or be found unreachable, print the cache, stop. */
async function once(w: FleetWatch, flags: WatchFlags, subs: Subscription[], errors: string[]): Promise<number> {
  const out = process.stdout;
  let fatal: Error | undefined;
  subs.push(w.informer.subscribe({ error: (err: unknown) => (fatal = err as Error) }));
  const waiting = new AbortController();
  const cancel = new AbortController();
  const stopped = interrupted(waiting.signal).then((why) => {
    if (why !== 'done') cancel.abort();
  });
  try {
    await w.informer.whenSynced({ timeout: flags.timeout, signal: cancel.signal });
    w.syncedAfterMs = Date.now() - w.startedAt;
  } catch (err) {
    if (cancel.signal.aborted) return 130;
    writeText(process.stderr, `error: ${printable(fatal?.message ?? (err as Error).message, { newlines: true })}\n`);
    return 1;
  } finally {
    waiting.abort();
    await stopped;
  }
  const unsynced = (w.status?.clusters ?? []).filter((c) => c.state !== 'synced');
  for (const c of unsynced) writeText(process.stderr, `error: ${printable(c.lastError?.message ?? new ClusterError(c.name, c.state).message, { newlines: true })} (${c.state})\n`);
  if (flags.output === 'json') {
    const store = w.informer.store;
    for (const key of store.listKeys().sort()) {
      const obj = store.getByKey(key);
      const cluster = key.slice(0, key.indexOf('/'));
      if (obj !== undefined) writeText(out, `${clusterEventJson({ type: 'add', obj, isInInitialList: true, cluster, key })}\n`);
    }
  } else {
    const opts = { colors: coloursFor(out), width: out.columns ?? PIPE_WIDTH, height: Number.MAX_SAFE_INTEGER, now: Date.now() };
    writeText(out, `${[...renderFleetHeader(w, opts), '', ...renderFleetTable(w, opts)].join('\n')}\n`);
  }
  if (errors.length > 0 && unsynced.length === 0) for (const e of errors.splice(0)) writeText(process.stderr, `${coloursFor(process.stderr).dim(e)}\n`);
  return unsynced.length > 0 ? 1 : 0;
}

/** Until Ctrl-C: the live screen, JSON lines, or (in a pipe) the table and then a line per change. */
async function live(w: FleetWatch, flags: WatchFlags, subs: Subscription[], errors: string[]): Promise<number> {
  const out = process.stdout;
  const c = coloursFor(out);
  const ended = new AbortController();
  let fatal: Error | undefined;
  const screen = out.isTTY === true && flags.output === 'table' ? liveScreen(out) : undefined;
  let frame: NodeJS.Timeout | undefined;
  const draw = (): void => {
    frame = undefined;
    if (screen !== undefined && !ended.signal.aborted) screen.draw(renderFleetView(w, { colors: c, width: screen.width, height: screen.height - 1, now: Date.now() }));
  };
  const redraw = (): void => {
    if (screen !== undefined && frame === undefined) frame = setTimeout(draw, FRAME_MS);
  };
  // Errors go to stderr as they come in a pipe; on a TTY the header shows each cluster's last one.
  const flushErrors = (): void => {
    if (screen !== undefined) errors.length = 0;
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
        if (flags.output === 'json') writeText(out, `${clusterEventJson(e)}\n`);
        else if (screen !== undefined) redraw();
        else if (w.syncedAfterMs !== undefined) {
          const obj = unwrapTombstone(e.obj);
          const status = e.type === 'delete' || obj === undefined ? `Deleted${e.type === 'delete' && e.reason !== 'deleted' ? ` (${e.reason})` : ''}` : statusOf(w.resource.kind, obj);
          writeText(out, `${e.type.padEnd(6)}  ${printable(e.cluster)}  ${printable(deletionHandlingMetaNamespaceKey(e.obj))}  ${printable(status)}\n`);
        }
      },
      error: (err: unknown) => {
        fatal = err as Error;
        ended.abort();
      },
    }),
    syncedOf(w.informer).subscribe((synced) => {
      if (!synced || w.syncedAfterMs !== undefined) return;
      w.syncedAfterMs = Date.now() - w.startedAt;
      if (screen === undefined && flags.output === 'table') {
        const opts = { colors: c, width: out.columns ?? PIPE_WIDTH, height: Number.MAX_SAFE_INTEGER, now: Date.now() };
        writeText(out, `${[...renderFleetHeader(w, opts), '', ...renderFleetTable(w, opts)].join('\n')}\n`);
      }
      flushErrors();
    }),
    w.informer.status$.subscribe(() => {
      if (w.syncedAfterMs !== undefined) flushErrors();
      redraw();
    }),
  );
  const tick = screen === undefined ? undefined : setInterval(draw, 1_000);
  if (screen !== undefined) draw();
  await interrupted(ended.signal);
  if (tick !== undefined) clearInterval(tick);
  if (frame !== undefined) clearTimeout(frame);
  if (screen !== undefined) {
    draw();
    ended.abort();
    screen.done();
  }
  ended.abort();
  if (fatal !== undefined) {
    writeText(process.stderr, `error: ${printable(fatal.message, { newlines: true })}\n`);
    return 1;
  }
  return 0;
}
