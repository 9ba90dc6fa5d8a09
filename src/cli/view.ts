/**
 * The live view: a header saying what the informer is doing (sync state,
 * reflector state, relists and reconnects, event rate, counts by namespace,
 * list progress) above a kubectl-style table, most recent changes first.
 * Over several clusters, one header line per cluster (its state, objects and
 * last error) and a CLUSTER column. Pure functions from the watched state to
 * text, so a TTY redraw, a one-off print and a test all render the same thing.
 */
import { stripVTControlCharacters } from 'node:util';
import Table from 'cli-table3';
import type { Colors } from 'picocolors/types.js';
import { printable } from '../errors/printable.js';
import { splitClusterKey } from '../multicluster/clusterKey.js';
import type { MultiClusterInformer, MultiClusterStatus } from '../multicluster/multiClusterInformer.js';
import type { ReflectorStatus } from '../reflector/index.js';
import type { KubeObject, ReadonlyIndexer } from '../store/types.js';
import { age, duration, statusOf } from './columns.js';
import { printerCell } from './printerColumns.js';
import type { CliResource } from './resources.js';
import { DELETED_SHOWN_MS, WatchSession, type RecentChange } from './session.js';
import { errorLine } from './terminal.js';

/** Where and how the view is drawn. */
export interface ViewOptions {
  readonly colors: Colors;
  /** Terminal columns. */
  readonly width: number;
  /** Terminal rows the whole view may take; the table gets what the header leaves. */
  readonly height: number;
  readonly now: number;
  /** Lines shown under the header (the demo's fault log). */
  readonly notes?: readonly string[];
}

/** What the view shows: the informer, what was asked, and the recent changes. */
export interface FleetWatch {
  readonly informer: MultiClusterInformer<KubeObject>;
  readonly resource: CliResource;
  /** undefined: each cluster's own namespace, or every namespace with -A. */
  readonly namespace: string | undefined;
  readonly allNamespaces: boolean;
  readonly startedAt: number;
  syncedAfterMs: number | undefined;
  status: MultiClusterStatus | undefined;
  /** The last live change per multi-cluster key, in the order they happened. */
  readonly recent: Map<string, RecentChange>;
}

/** cli-table3's rules, all left out: kubectl's borderless look, columns separated by two spaces. */
const RULES = ['top', 'top-mid', 'top-left', 'top-right', 'bottom', 'bottom-mid', 'bottom-left', 'bottom-right'];
const SIDES = ['left', 'left-mid', 'mid', 'mid-mid', 'right', 'right-mid'];
const BORDERLESS = { ...Object.fromEntries([...RULES, ...SIDES].map((k) => [k, ''])), middle: '  ' };

const thousands = (n: number): string => n.toLocaleString('en-US');

/**
 * What the reflector is doing, in a few words.
 *
 * @param r the reflector's last status.
 * @returns e.g. `watching at rv 1234`, `backing off 800ms (server)`.
 */
export function describeReflector(r: ReflectorStatus | undefined): string {
  if (r === undefined) return 'starting';
  switch (r.state) {
    case 'listing':
      return r.mode === 'stream' ? 'listing (streaming)' : 'listing';
    case 'watching':
      return `watching at rv ${r.resourceVersion}`;
    case 'backoff':
      return `backing off ${duration(r.delayMs)} (${r.kind})`;
    case 'relisting':
      return `relisting (${r.reason})`;
    case 'error':
      return r.terminal ? 'failed' : 'error';
  }
}

/**
 * The header lines: what is watched, sync and reflector state, counters, rate, namespaces, list progress.
 *
 * @param s the session.
 * @param opts colours, size and time.
 * @returns the lines.
 */
export function renderHeader(s: WatchSession, opts: ViewOptions): string[] {
  const c = opts.colors;
  const r = s.reflector;
  const scope = !s.resource.namespaced ? 'cluster-scoped' : s.namespace === undefined ? 'all namespaces' : `namespace ${printable(s.namespace)}`;
  const sync = s.syncedAfterMs !== undefined && s.informer.status().synced ? c.green(`synced in ${duration(s.syncedAfterMs)}`) : c.yellow('syncing…');
  const counters = r?.counters;
  const lines = [
    `${c.bold(`rxkube watch ${s.resource.ref}`)} · ${scope} · ${sync}`,
    [
      // Between the list that synced the cache and the watch's first status, the reflector still says 'listing'.
      `reflector ${r?.state === 'listing' && r.counters.lists === 1 && s.informer.status().synced ? 'listed, opening the watch' : describeReflector(r)}`,
      `lists ${counters?.lists ?? 0} (relists ${counters?.relists ?? 0})`,
      `watches ${counters?.watches ?? 0} (reconnects ${s.reconnects})`,
      s.errors > 0 ? c.red(`errors ${s.errors}`) : 'errors 0',
    ].join(' · '),
    `${thousands(s.informer.store.listKeys().length)} objects · ${s.rate(opts.now).toFixed(1)} live events/s · ${thousands(s.adds)} adds · ${thousands(s.updates)} updates · ${thousands(s.deletes)} deletes`,
  ];
  if (s.resource.namespaced) lines.push(`by namespace: ${namespaceCounts(s, 8) || '—'}`);
  // The first list until the cache is synced, and every relist: the store fills only when a list is complete.
  const listing = r?.state === 'relisting' || (r?.state === 'listing' && (!s.informer.status().synced || r.counters.lists > 1));
  if (listing && s.list !== undefined) {
    lines.push(c.cyan(`listing: ${thousands(s.list.objects)} objects in ${s.list.pages} pages so far (${duration(opts.now - s.list.startedAt)})`));
  }
  if (s.lastError !== undefined) lines.push(c.dim(`last error: ${errorLine(s.lastError)}`));
  return lines.map((l) => truncate(l, opts.width));
}

/** `default 120 · web 88 · …`, largest first, `max` of them named. */
function namespaceCounts(s: WatchSession, max: number): string {
  const store = s.informer.store;
  const counts = store.listIndexFuncValues('namespace').map((ns) => [ns, store.indexKeys('namespace', ns).length] as const);
  counts.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = counts.slice(0, max).map(([ns, n]) => `${printable(ns)} ${thousands(n)}`);
  if (counts.length > max) shown.push(`+${counts.length - max} more`);
  return shown.join(' · ');
}

/** One table row: the object and its last live change, if any. */
interface Row {
  readonly key: string;
  readonly obj: KubeObject;
  readonly change: Pick<RecentChange, 'type' | 'at'> | undefined;
}

/** A column the table adds before NAME or after it: its header, width and cell. */
interface Column {
  readonly head: string;
  readonly width: number;
  cell(row: Row): string;
}

/** NAMESPACE, shown unless one namespace is watched. */
const NAMESPACE_COLUMN: Column = { head: 'NAMESPACE', width: 18, cell: (row) => printable(row.obj.metadata?.namespace ?? '') };

/**
 * A kubectl-style table: the columns `before`, NAME (as wide as the rest leaves), the columns `after`
 * (given the rows shown), AGE and LAST (the last live change), and a line saying how many were left out.
 * Live changes come first (newest on top, deleted objects for a few seconds), then the rest by key.
 */
function rowsTable(
  recent: ReadonlyMap<string, RecentChange>,
  store: Pick<ReadonlyIndexer<KubeObject>, 'getByKey' | 'listKeys'>,
  columns: (rows: readonly Row[]) => { readonly before: readonly Column[]; readonly after: readonly Column[] },
  opts: ViewOptions,
): string[] {
  const c = opts.colors;
  const limit = Math.max(1, opts.height - 2);
  const rows: Row[] = [];
  for (const [key, change] of [...recent].reverse()) {
    if (rows.length >= limit) break;
    if (change.type === 'delete' && opts.now - change.at > DELETED_SHOWN_MS) continue;
    const obj = change.type === 'delete' ? change.obj : store.getByKey(key);
    if (obj !== undefined) rows.push({ key, obj, change });
  }
  const seen = new Set(rows.map((r) => r.key));
  const keys = store.listKeys().sort();
  for (const key of keys) {
    if (rows.length >= limit) break;
    const obj = seen.has(key) ? undefined : store.getByKey(key);
    if (obj !== undefined) rows.push({ key, obj, change: undefined });
  }
  const { before, after } = columns(rows);
  const fixed = [...before, ...after].reduce((a, col) => a + col.width + 2, 0) + 8 + 16 + 2 * 2;
  const widths = [...before.map((col) => col.width), Math.max(12, Math.min(60, opts.width - fixed)), ...after.map((col) => col.width), 8, 16];
  const head = [...before.map((col) => col.head), 'NAME', ...after.map((col) => col.head), 'AGE', 'LAST'];
  const table = new Table({ head: head.map((h) => c.bold(h)), chars: BORDERLESS, style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [] }, colWidths: widths, wordWrap: false });
  for (const row of rows) {
    const paint = row.change?.type === 'delete' ? c.red : row.change?.type === 'add' ? c.green : (text: string) => text;
    table.push([
      // Names and statuses come from the cluster: escaped before the table measures them or colours them.
      ...before.map((col) => col.cell(row)),
      paint(printable(row.obj.metadata?.name ?? row.key)),
      ...after.map((col) => col.cell(row)),
      age(row.obj.metadata?.creationTimestamp, opts.now),
      c.dim(row.change === undefined ? '' : `${row.change.type} ${duration(opts.now - row.change.at)} ago`),
    ]);
  }
  const lines = table.toString().split('\n').map((l) => l.trimEnd());
  const shown = rows.filter((r) => r.change?.type !== 'delete').length;
  if (keys.length > shown) lines.push(c.dim(`… ${thousands(keys.length - shown)} more`));
  return lines;
}

/**
 * The table: NAMESPACE (unless one namespace is watched), NAME, STATUS, a custom resource's printer
 * columns, AGE and LAST (the last live change).
 *
 * @param s the session.
 * @param opts colours, size and time; `height` bounds the rows.
 * @returns the table's lines, and a last line saying how many were left out.
 */
export function renderTable(s: WatchSession, opts: ViewOptions): string[] {
  const c = opts.colors;
  s.prune(opts.now);
  // A Ready condition's reason (`ReconciliationSucceeded`) needs more room than a built-in kind's status.
  const status: Column = {
    head: 'STATUS',
    width: s.resource.builtIn ? 24 : 32,
    cell: (row) => (row.change?.type === 'delete' ? c.red('Deleted') : colourStatus(c, printable(statusOf(s.resource.kind, row.obj)))),
  };
  // A custom resource's printer columns sit between STATUS and AGE, each as wide as its header or 20 at most.
  const extra = (s.resource.columns ?? []).map((col): Column => ({
    head: printable(col.name.toUpperCase()),
    width: Math.min(20, Math.max(8, col.name.length + 2)),
    cell: (row) => printable(printerCell(col, row.obj, opts.now)),
  }));
  const before = s.resource.namespaced && s.namespace === undefined ? [NAMESPACE_COLUMN] : [];
  return rowsTable(s.recent, s.informer.store, () => ({ before, after: [status, ...extra] }), opts);
}

/** Over several clusters, the header: what is watched and the sync state, then one line per cluster. */
function fleetHeader(w: FleetWatch, opts: ViewOptions): string[] {
  const c = opts.colors;
  const clusters = w.status?.clusters ?? [];
  const scope = !w.resource.namespaced ? 'cluster-scoped' : w.allNamespaces ? 'all namespaces' : w.namespace === undefined ? "each context's namespace" : `namespace ${printable(w.namespace)}`;
  const sync = w.syncedAfterMs !== undefined && w.status?.synced === true ? c.green(`synced in ${duration(w.syncedAfterMs)}`) : c.yellow('syncing…');
  const lines = [`${c.bold(`rxkube watch ${w.resource.ref}`)} · ${clusters.length} clusters · ${scope} · ${sync}`];
  const nameWidth = Math.max(7, ...clusters.map((s) => printable(s.name).length));
  for (const s of clusters) {
    const state = s.state === 'synced' ? c.green(s.state) : s.state === 'syncing' ? c.yellow(s.state) : c.red(s.state);
    const error = s.lastError !== undefined && s.state !== 'synced' ? c.dim(`  ${s.lastError.cause instanceof Error ? errorLine(s.lastError.cause) : printable(s.lastError.message.replace(/[ \t\n\r]+/g, ' '))}`) : '';
    lines.push(`${printable(s.name).padEnd(nameWidth)}  ${state}${' '.repeat(Math.max(1, 12 - s.state.length))}${thousands(w.informer.store.indexKeys('cluster', s.name).length)} objects${s.replacing ? ' (new kubeconfig syncing)' : ''}${error}`);
  }
  return lines.map((l) => truncate(l, opts.width));
}

/** Over several clusters, the table: CLUSTER, NAMESPACE (unless one namespace is watched), NAME, STATUS, AGE and LAST. */
function fleetTable(w: FleetWatch, opts: ViewOptions): string[] {
  const cluster = (rows: readonly Row[]): Column => ({
    head: 'CLUSTER',
    width: Math.min(24, Math.max(7, ...rows.map((r) => printable(splitClusterKey(r.key).cluster).length))),
    cell: (row) => printable(splitClusterKey(row.key).cluster),
  });
  const status: Column = {
    head: 'STATUS',
    width: 24,
    cell: (row) => (row.change?.type === 'delete' ? opts.colors.red('Deleted') : printable(statusOf(w.resource.kind, row.obj))),
  };
  const namespace = w.resource.namespaced && w.namespace === undefined ? [NAMESPACE_COLUMN] : [];
  return rowsTable(w.recent, w.informer.store, (rows) => ({ before: [cluster(rows), ...namespace], after: [status] }), opts);
}

/**
 * The whole view: header, notes, a blank line, the table, fit to the height.
 *
 * @param w the session, or the watch over several clusters.
 * @param opts colours, size and time.
 * @returns the text, without a trailing newline.
 */
export function renderView(w: WatchSession | FleetWatch, opts: ViewOptions): string {
  const one = w instanceof WatchSession;
  const header = [...(one ? renderHeader(w, opts) : fleetHeader(w, opts)), ...(opts.notes ?? []).map((n) => truncate(n, opts.width)), ''];
  const rest = { ...opts, height: Math.max(3, opts.height - header.length - 1) };
  return [...header, ...(one ? renderTable(w, rest) : fleetTable(w, rest))].join('\n');
}

function colourStatus(c: Colors, status: string): string {
  if (/Running|Ready\b|Active|Complete|Bound/.test(status) && !/NotReady/.test(status)) return c.green(status);
  if (/Pending|Creating|Terminating|Unknown/.test(status)) return c.yellow(status);
  if (/BackOff|Err|Failed|NotReady|Evicted/.test(status)) return c.red(status);
  return status;
}

/** Cuts a line to the width, counting visible characters only (colour codes are kept whole). */
function truncate(line: string, width: number): string {
  const visible = stripVTControlCharacters(line);
  if (visible.length <= width) return line;
  // Rare (narrow terminals): drop the colours rather than cut inside an escape sequence.
  return `${visible.slice(0, Math.max(0, width - 1))}…`;
}
