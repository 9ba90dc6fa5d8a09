/**
 * What the sharder's work queue holds, by kind:
 * - `place`: a sharded object to give its ring owner's label (assign, drain
 *   or move it);
 * - `follow`: an owned object (of `owns[owned]`) to give its owner's label;
 * - `forget`: a departed member whose Lease may be deleted.
 */
export type SharderWork =
  | { readonly kind: 'place'; readonly key: string }
  | { readonly kind: 'follow'; readonly owned: number; readonly key: string }
  | { readonly kind: 'forget'; readonly member: string };

/**
 * A {@link SharderWork} as the queue holds it. The work queue tells items
 * apart by value, so the same work added twice must be the same value: a
 * string, written only by {@link workKey} and read only by {@link workOf}.
 */
export type WorkKey = string & { readonly __sharderWork: never };

// An object key (namespace/name) and a member identity never contain a NUL or a U+0001, so a first character of either
// tells `follow` and `forget` from `place`, whose string is the object key itself.
const FOLLOW = '\0';
const FORGET = '\u0001';

/** The queue's value for `work`. */
export function workKey(work: SharderWork): WorkKey {
  switch (work.kind) {
    case 'place':
      return work.key as WorkKey;
    case 'follow':
      return `${FOLLOW}${work.owned}${FOLLOW}${work.key}` as WorkKey;
    case 'forget':
      return `${FORGET}${work.member}` as WorkKey;
  }
}

/** The work a queue value stands for. */
export function workOf(key: WorkKey): SharderWork {
  if (key.startsWith(FOLLOW)) {
    const at = key.indexOf(FOLLOW, 1);
    return { kind: 'follow', owned: Number(key.slice(1, at)), key: key.slice(at + 1) };
  }
  if (key.startsWith(FORGET)) return { kind: 'forget', member: key.slice(1) };
  return { kind: 'place', key };
}
