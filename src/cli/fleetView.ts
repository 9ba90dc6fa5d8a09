/**
 * The view of `rxkube watch` over several clusters: a header with one line
 * per cluster (its state, objects and last error) above a table with a
 * CLUSTER column, most recent changes first. Pure functions from the
 * watched state to text, like view.ts for one cluster.
 */
import { stripVTControlCharacters } from 'node:util';
import Table from 'cli-table3';
import type { Colors } from 'picocolors/types.js';
import type { MultiClusterInformer, MultiClusterStatus } from '../multicluster/multiClusterInformer.js';
import { splitClusterKey } from '../multicluster/clusterKey.js';
import { printable } from '../errors/printable.js';
import type { KubeObject } from '../store/types.js';
import { age, duration, statusOf } from './columns.js';
import type { CliResource } from './resources.js';
import { BORDERLESS } from './view.js';

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
  readonly recent: Map<string, { readonly type: string; readonly at: number; readonly obj: KubeObject }>;
}

/** Where and how the view is drawn. */
export interface FleetViewOptions {
  readonly colors: Colors;
  readonly width: number;
  readonly height: number;
  readonly now: number;
}

const thousands = (n: number): string => n.toLocaleString('en-US');

/**
 * The header: what is watched and the sync state, then one line per cluster.
 *
 * @param w the watch.
 * @param opts colours, size and time.
 * @returns the lines.
 */
export function renderFleetHeader(w: FleetWatch, opts: FleetViewOptions): string[] {
  const c = opts.colors;
  const clusters = w.status?.clusters ?? [];
  const scope = !w.resource.namespaced ? 'cluster-scoped' : w.allNamespaces ? 'all namespaces' : w.namespace === undefined ? "each context's namespace" : `namespace ${printable(w.namespace)}`;
  const sync = w.syncedAfterMs !== undefined && w.status?.synced === true ? c.green(`synced in ${duration(w.syncedAfterMs)}`) : c.yellow('syncing…');
  const lines = [`${c.bold(`rxkube watch ${w.resource.ref}`)} · ${clusters.length} clusters · ${scope} · ${sync}`];
  const nameWidth = Math.max(7, ...clusters.map((s) => printable(s.name).length));
  for (const s of clusters) {
    const state = s.state === 'synced' ? c.green(s.state) : s.state === 'syncing' ? c.yellow(s.state) : c.red(s.state);
    const error = s.lastError !== undefined && s.state !== 'synced' ? c.dim(`  ${printable(oneLine(s.lastError.cause instanceof Error ? `${s.lastError.cause.name}: ${s.lastError.cause.message}` : s.lastError.message))}`) : '';
    lines.push(`${printable(s.name).padEnd(nameWidth)}  ${state}${' '.repeat(Math.max(1, 12 - s.state.length))}${thousands(w.informer.store.indexKeys('cluster', s.name).length)} objects${s.replacing ? ' (new kubeconfig syncing)' : ''}${error}`);
  }
  return lines.map((l) => truncate(l, opts.width));
}

/**
 * The table: CLUSTER, NAMESPACE (unless one namespace is watched), NAME, STATUS, AGE and LAST.
 *
 * @param w the watch.
 * @param opts colours, size and time; `height` bounds the rows.
 * @returns the table's lines, and a last line saying how many were left out.
 */
export function renderFleetTable(w: FleetWatch, opts: FleetViewOptions): string[] {
  const c = opts.colors;
  const withNamespace = w.resource.namespaced && w.namespace === undefined;
  const limit = Math.max(1, opts.height - 2);
  const store = w.informer.store;
  const rows: { key: string; obj: KubeObject; change: { type: string; at: number } | undefined }[] = [];
  const seen = new Set<string>();
  for (const [key, change] of [...w.recent].reverse()) {
    if (rows.length >= limit) break;
    if (change.type === 'delete' && opts.now - change.at > 5_000) continue;
    const obj = change.type === 'delete' ? change.obj : store.getByKey(key);
    if (obj === undefined) continue;
    rows.push({ key, obj, change });
    seen.add(key);
  }
  const keys = store.listKeys().sort();
  for (const key of keys) {
    if (rows.length >= limit) break;
    const obj = seen.has(key) ? undefined : store.getByKey(key);
    if (obj !== undefined) rows.push({ key, obj, change: undefined });
  }
  const clusterWidth = Math.min(24, Math.max(7, ...rows.map((r) => printable(splitClusterKey(r.key).cluster).length)));
  const fixed = clusterWidth + (withNamespace ? 18 : 0) + 24 + 8 + 16 + 2 * (withNamespace ? 5 : 4);
  const widths = [clusterWidth, ...(withNamespace ? [18] : []), Math.max(12, Math.min(60, opts.width - fixed)), 24, 8, 16];
  const head = ['CLUSTER', ...(withNamespace ? ['NAMESPACE'] : []), 'NAME', 'STATUS', 'AGE', 'LAST'];
  const table = new Table({ head: head.map((h) => c.bold(h)), chars: BORDERLESS, style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [] }, colWidths: widths, wordWrap: false });
  for (const row of rows) {
    const meta = row.obj.metadata;
    const deleted = row.change?.type === 'delete';
    const paint = deleted ? c.red : row.change?.type === 'add' ? c.green : (text: string) => text;
    table.push([
      // Names and statuses come from the clusters: escaped before the table measures them or colours them.
      printable(splitClusterKey(row.key).cluster),
      ...(withNamespace ? [printable(meta?.namespace ?? '')] : []),
      paint(printable(meta?.name ?? row.key)),
      deleted ? c.red('Deleted') : printable(statusOf(w.resource.kind, row.obj)),
      age(meta?.creationTimestamp, opts.now),
      c.dim(row.change === undefined ? '' : `${row.change.type} ${duration(opts.now - row.change.at)} ago`),
    ]);
  }
  const lines = table.toString().split('\n').map((l) => l.trimEnd());
  const shown = rows.filter((r) => r.change?.type !== 'delete').length;
  if (keys.length > shown) lines.push(c.dim(`… ${thousands(keys.length - shown)} more`));
  return lines;
}

/**
 * The whole view: header, a blank line, the table, fit to the height.
 *
 * @param w the watch.
 * @param opts colours, size and time.
 * @returns the text, without a trailing newline.
 */
export function renderFleetView(w: FleetWatch, opts: FleetViewOptions): string {
  const header = [...renderFleetHeader(w, opts), ''];
  return [...header, ...renderFleetTable(w, { ...opts, height: Math.max(3, opts.height - header.length - 1) })].join('\n');
}

function oneLine(text: string): string {
  return text.replace(/[ \t\n\r]+/g, ' ');
}

function truncate(line: string, width: number): string {
  const visible = stripVTControlCharacters(line);
  return visible.length <= width ? line : `${visible.slice(0, Math.max(0, width - 1))}…`;
}
