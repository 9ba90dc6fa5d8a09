/** A minimal pod manifest for tests. */
export function pod(name: string, opts: { namespace?: string; labels?: Record<string, string>; image?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.namespace ?? 'default', ...(opts.labels && { labels: opts.labels }) },
    spec: { containers: [{ name: 'main', image: opts.image ?? 'busybox' }] },
  };
}
