// Ordering resourceVersions (docs/semantics.md RYW-5). Internal.

const DECIMAL = /^[0-9]+$/;

/**
 * The canonical form of a resourceVersion that can be ordered: a decimal
 * string (an etcd revision, as kube-apiserver with etcd writes them) without
 * leading zeros; `undefined` for anything else. Kubernetes calls
 * resourceVersions opaque; comparing them is only sound for servers backed
 * by etcd, where they are its revisions, so any other form is never ordered.
 */
export function orderedResourceVersion(rv: unknown): string | undefined {
  if (typeof rv !== 'string' || !DECIMAL.test(rv)) return undefined;
  const trimmed = rv.replace(/^0+(?=.)/, '');
  return trimmed;
}

/**
 * Compares two canonical decimal resourceVersions (from
 * {@link orderedResourceVersion}) as integers, without converting them: a
 * longer one is larger, and one of equal length compares as text.
 *
 * @returns negative when `a` is older, 0 when equal, positive when newer.
 */
export function compareOrdered(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * True when `have` is at or past `want`, both as they arrive (any strings):
 * false when either is not a decimal resourceVersion, since then nothing is
 * known.
 */
export function atOrPast(have: unknown, want: string): boolean {
  const h = orderedResourceVersion(have);
  return h !== undefined && compareOrdered(h, want) >= 0;
}
