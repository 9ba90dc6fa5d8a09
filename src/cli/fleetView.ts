/**
 * The view of `rxkube watch` over several clusters: a header with one line
 * per cluster (its state, objects and last error) above a table with a
 * CLUSTER column, most recent changes first. Pure functions from the
 * watched state to text, like view.ts for one cluster.
 */
import type { MultiClusterInformer, MultiClusterStatus } from '../multicluster/multiClusterInformer.js';
import { splitClusterKey } from '../multicluster/clusterKey.js';
import { printable } from '../errors/printable.js';
import type { KubeObject } from '../store/types.js';
import { duration, statusOf } from './columns.js';
import type { CliResource } from './resources.js';
import type { RecentChange } from './session.js';
import { errorLine } from './terminal.js';
import { NAMESPACE_COLUMN, rowsTable, thousands, truncate, type Column, type Row, type ViewOptions } from './view.js';

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

/**
 * The header: what is watched and the sync state, then one line per cluster.
 *
 * @param w the watch.
 * @param opts colours, size and time.
 * @returns the lines.
 */
export function renderFleetHeader(w: FleetWatch, opts: ViewOptions): string[] {
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

/**
 * The table: CLUSTER, NAMESPACE (unless one namespace is watched), NAME, STATUS, AGE and LAST.
 *
 * @param w the watch.
 * @param opts colours, size and time; `height` bounds the rows.
 * @returns the table's lines, and a last line saying how many were left out.
 */
export function renderFleetTable(w: FleetWatch, opts: ViewOptions): string[] {
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
 * The whole view: header, a blank line, the table, fit to the height.
 *
 * @param w the watch.
 * @param opts colours, size and time.
 * @returns the text, without a trailing newline.
 */
export function renderFleetView(w: FleetWatch, opts: ViewOptions): string {
  const header = [...renderFleetHeader(w, opts), ''];
  return [...header, ...renderFleetTable(w, { ...opts, height: Math.max(3, opts.height - header.length - 1) })].join('\n');
}
