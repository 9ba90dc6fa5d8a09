/**
 * Waits until `condition` returns a truthy value, checking after every turn
 * of the event loop (and at least every 5 ms), and fails with `what` after
 * `timeoutMs`. This waits on a condition; it never sleeps a fixed time.
 */
export async function waitFor<R>(condition: () => R | undefined | false | null, what: string, timeoutMs = 10_000): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A minimal pod manifest for tests. */
export function pod(name: string, opts: { namespace?: string; labels?: Record<string, string>; image?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: opts.namespace ?? 'default', ...(opts.labels && { labels: opts.labels }) },
    spec: { containers: [{ name: 'main', image: opts.image ?? 'busybox' }] },
  };
}

/** A promise and its resolver, for handlers a test wants to hold open. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
