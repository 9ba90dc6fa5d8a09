/**
 * `rxkube watch <resource>`: an informer-backed view of one resource. On a
 * TTY, a live screen; in a pipe, the table once synced and then one line per
 * change; `-o json` writes one JSON line per event; `--once` prints the
 * synced cache and exits. Every way out (Ctrl-C, SIGTERM, a closed pipe, a
 * fatal error) unsubscribes the informer and closes the simulator, so the
 * process ends with no socket left open.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { InformerEvent } from '../operators/informerEvent.js';
import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKey, parseFieldSelector, parseLabelSelector, unwrapTombstone } from '../store/index.js';
import type { KubeObject } from '../store/types.js';
import { statusOf } from './columns.js';
import { loadKubeConfig, useContext } from './kubeconfig.js';
import { resolveResource, type CliResource } from './resources.js';
import { WatchSession } from './session.js';
import { resolveWatched } from './watchResource.js';
import { startSimulator, type Simulator } from './simulator.js';
import { runWatchClusters } from './watchClusters.js';
import { coloursFor, errorLine, interrupted, liveScreen, writeText } from './terminal.js';
import { printable, printableJson } from '../errors/printable.js';
import { jsonText } from '../store/jsonText.js';
import { UsageError } from './usage.js';
import { describeReflector, renderHeader, renderTable, renderView } from './view.js';
import type { WatchFlags } from './watchFlags.js';
import { syncedOf } from '../informer/syncedOf.js';

/** Line width when stdout is not a terminal. */
const PIPE_WIDTH = 120;

/** Redraws at most this often, however fast events come. */
const FRAME_MS = 200;

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
 * `"object":null` when its last state is unknown too). Characters a terminal
 * would act on are `\u` escapes (still JSON), and an object nested deeper than
 * JSON.stringify can go is written all the same.
 *
 * @param e the event.
 * @returns the line, without its newline.
 */
export function eventJson(e: InformerEvent<KubeObject>): string {
  const key = deletionHandlingMetaNamespaceKey(e.obj);
  if (e.type === 'add') return printableJson(jsonText({ type: 'add', key, initial: e.isInInitialList, object: e.obj }));
  if (e.type === 'update') return printableJson(jsonText({ type: 'update', key, object: e.obj }));
  const tombstone = e.obj instanceof DeletedFinalStateUnknown;
  return printableJson(jsonText({ type: 'delete', key, object: unwrapTombstone(e.obj) ?? null, ...(tombstone ? { finalStateUnknown: true } : {}) }));
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
  let session: WatchSession;
  try {
    session = new WatchSession({
      kc,
      resource,
      namespace: namespaceOf(resource, flags, kc),
      labelSelector: flags.selector,
      fieldSelector: flags.fieldSelector,
      ...(flags.fifo === undefined ? {} : { fifo: flags.fifo }),
      ...(simulator === undefined ? {} : { backoff: { initialMs: 200, maxMs: 2_000 } }),
    });
  } catch (err) {
    await simulator?.close();
    throw err;
  }
  try {
    return flags.once === true ? await once(session, flags) : await live(session, flags, simulator);
  } finally {
    session.stop();
    await simulator?.close();
  }
}

/** `--once`: wait for the sync (saying on stderr what goes wrong meanwhile), print the cache (table or JSON lines), stop. */
async function once(session: WatchSession, flags: WatchFlags): Promise<number> {
  const out = process.stdout;
  const c = coloursFor(out);
  let fatal: Error | undefined;
  session.start(
    () => {},
    (err, isFatal) => {
      if (isFatal) fatal = err;
      else writeText(process.stderr, `${coloursFor(process.stderr).dim(errorLine(err))}\n`);
    },
  );
  // Ctrl-C while waiting gives up the sync the same way a timeout does.
  const waiting = new AbortController();
  const cancel = new AbortController();
  const stopped = interrupted(waiting.signal).then((why) => {
    if (why !== 'done') cancel.abort();
    return why;
  });
  try {
    await session.informer.whenSynced({ timeout: flags.timeout, signal: cancel.signal });
  } catch (err) {
    if (cancel.signal.aborted) return 130;
    // A timeout's own message names the informer and its last error; an error that ended the informer does not.
    writeText(process.stderr, `error: ${printable(fatal === undefined ? (err as Error).message : `${session.informer.name} did not sync: ${fatal.message}`, { newlines: true })}\n`);
    return 1;
  } finally {
    waiting.abort();
    await stopped;
  }
  const store = session.informer.store;
  if (flags.output === 'json') {
    for (const key of store.listKeys().sort()) {
      const obj = store.getByKey(key);
      if (obj !== undefined) writeText(out, `${eventJson({ type: 'add', obj, isInInitialList: true })}\n`);
    }
    return 0;
  }
  const opts = { colors: c, width: out.columns ?? PIPE_WIDTH, height: Number.MAX_SAFE_INTEGER, now: Date.now() };
  writeText(out, `${[...renderHeader(session, opts), '', ...renderTable(session, opts)].join('\n')}\n`);
  return 0;
}

/** Until Ctrl-C: the live screen, JSON lines, or (in a pipe) the table and then a line per change. */
async function live(session: WatchSession, flags: WatchFlags, simulator: Simulator | undefined): Promise<number> {
  const out = process.stdout;
  const err = process.stderr;
  const c = coloursFor(out);
  const ended = new AbortController();
  let fatal: Error | undefined;
  const tty = out.isTTY === true && flags.output === 'table';
  const screen = tty ? liveScreen(out) : undefined;
  let synced = false;
  let lastState = '';
  let frame: NodeJS.Timeout | undefined;

  const draw = (): void => {
    frame = undefined;
    if (screen !== undefined && !ended.signal.aborted) screen.draw(renderView(session, { colors: c, width: screen.width, height: screen.height - 1, now: Date.now() }));
  };
  const scheduleDraw = (): void => {
    if (screen !== undefined && frame === undefined) frame = setTimeout(draw, FRAME_MS);
  };
  const line = (e: InformerEvent<KubeObject>): string => {
    const obj = unwrapTombstone(e.obj);
    const status = e.type === 'delete' || obj === undefined ? 'Deleted' : statusOf(session.resource.kind, obj);
    return `${e.type.padEnd(6)}  ${printable(deletionHandlingMetaNamespaceKey(e.obj))}  ${printable(status)}`;
  };

  session.start(
    (e) => {
      if (flags.output === 'json') writeText(out, `${eventJson(e)}\n`);
      else if (screen !== undefined) scheduleDraw();
      else if (synced) writeText(out, `${line(e)}\n`);
    },
    (error, isFatal) => {
      if (isFatal) {
        fatal = error;
        ended.abort();
      } else if (screen === undefined) {
        writeText(err, `${c.dim(errorLine(error))}\n`);
      } else scheduleDraw();
    },
  );
  const onSynced = syncedOf(session.informer).subscribe((isSynced) => {
    if (!isSynced || synced) return;
    synced = true;
    simulator?.startChurn();
    if (screen === undefined && flags.output === 'table') {
      const opts = { colors: c, width: out.columns ?? PIPE_WIDTH, height: Number.MAX_SAFE_INTEGER, now: Date.now() };
      writeText(out, `${[...renderHeader(session, opts), '', ...renderTable(session, opts)].join('\n')}\n`);
    }
  });
  // A pipe still hears what the reflector does (relists, backoffs), on stderr so stdout stays data.
  const onStatus = session.informer.status$.subscribe((s) => {
    const state = describeReflector(s.reflector).replace(/ at rv \d+$/, '');
    if (state === lastState) return;
    lastState = state;
    if (screen === undefined && flags.output === 'table' && synced) writeText(err, `${c.dim(`reflector ${printable(state)}`)}\n`);
  });
  const tick = screen === undefined ? undefined : setInterval(draw, 1_000);
  if (screen !== undefined) draw();

  await interrupted(ended.signal);
  if (tick !== undefined) clearInterval(tick);
  if (frame !== undefined) clearTimeout(frame);
  onSynced.unsubscribe();
  onStatus.unsubscribe();
  if (screen !== undefined) {
    draw();
    ended.abort();
    screen.done();
  }
  ended.abort();
  session.stop();
  if (fatal !== undefined) {
    writeText(err, `error: ${printable(`${session.informer.name}: ${fatal.message}`, { newlines: true })}\n`);
    return 1;
  }
  return 0;
}
