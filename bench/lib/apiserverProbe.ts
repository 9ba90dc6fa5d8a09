// What the apiserver benchmark checks of kube-apiserver itself, so its figures say which path the server took:
// whether an answer came gzip'd, and how many lists it served from its watch cache and how many from etcd.

import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** One GET with the admin token; resolves with the response's headers and its body's byte count as sent. */
function get(kc: KubeConfig, path: string, headers: Record<string, string>): Promise<{ encoding: string; bytes: number; body: string }> {
  const cluster = kc.getCurrentCluster();
  const token = kc.getCurrentUser()?.token;
  if (cluster === null || token === undefined) throw new Error('apiserver probe: the kubeconfig has no cluster or token');
  const ca = Buffer.from(cluster.caData ?? '', 'base64');
  return new Promise((resolve, reject) => {
    const req = request(`${cluster.server}${path}`, { ca, headers: { ...headers, authorization: `Bearer ${token}` }, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`apiserver probe: GET ${path} answered ${res.statusCode}`));
        const raw = Buffer.concat(chunks);
        resolve({ encoding: String(res.headers['content-encoding'] ?? 'identity'), bytes: raw.length, body: raw.toString('latin1') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`apiserver probe: GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** The Content-Encoding kube-apiserver gives a list page of `limit` pods and a streamed initial list (WatchList), asked for gzip. */
export async function encodings(kc: KubeConfig, limit: number): Promise<{ page: string; pageBytes: number; watchList: string }> {
  const gzip = { 'accept-encoding': 'gzip' };
  const page = await get(kc, `/api/v1/pods?limit=${limit}`, gzip);
  // A watch that ends by itself (timeoutSeconds) after its initial events, so the probe's answer completes.
  const watch = await get(kc, '/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1', gzip);
  return { page: page.encoding, pageBytes: page.bytes, watchList: watch.encoding };
}

/** Lists of pods kube-apiserver answered so far: from its watch cache, through to etcd, and as streamed initial lists. */
export interface ListCounts {
  readonly fromCache: number;
  readonly fromEtcd: number;
  readonly watchLists: number;
}

/** Sums the samples of `metric` in a Prometheus text body whose labels include every one of `labels`. */
function sum(text: string, metric: string, labels: readonly string[]): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const end = line.lastIndexOf('}');
    const set = line.slice(metric.length + 1, end);
    if (labels.every((l) => set.includes(l))) total += Number(line.slice(end + 1).trim());
  }
  return total;
}

/**
 * Reads kube-apiserver's /metrics (v1.34's names): LIST requests for pods served from the watch cache, list calls
 * it made to etcd for pods, and WatchList requests (watches with sendInitialEvents) for pods it finished.
 */
export async function listCounts(kc: KubeConfig): Promise<ListCounts> {
  const { body } = await get(kc, '/metrics', {});
  const pods = ['group=""', 'resource="pods"'];
  return {
    fromCache: sum(body, 'apiserver_cache_list_total', pods),
    fromEtcd: sum(body, 'etcd_requests_total', [...pods, 'operation="list"']) + sum(body, 'etcd_requests_total', [...pods, 'operation="listWithCount"']),
    watchLists: sum(body, 'apiserver_watch_list_duration_seconds_count', pods),
  };
}
