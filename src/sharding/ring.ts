import { createHash } from 'node:crypto';
import { describeValue } from '../options/validate.js';

/** The most points a member may have on the ring: each is a hash and 4 bytes, for every member. */
export const MAX_VIRTUAL_NODES = 100_000;

/**
 * Options of {@link hashRing}.
 */
export interface HashRingOptions {
  /**
   * Points each member takes on the ring. More points even out the share of
   * each member (at 1 000 points per member the arcs differ by about 3 %),
   * at the cost of a larger ring to build when membership changes.
   * @default 1_000
   */
  readonly virtualNodes?: number;
}

/**
 * A consistent hash ring over a set of members, made by {@link hashRing}.
 */
export interface HashRing {
  /** The members, sorted, each once. */
  readonly members: readonly string[];
  /** The member that owns `key`, or undefined when the ring is empty. */
  ownerOf(key: string): string | undefined;
}

/** A point on the ring: the first 32 bits of SHA-1, stable across processes, platforms and versions. */
export function ringHash(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

/**
 * Builds a consistent hash ring: each member is hashed onto a circle of
 * 2³² points `virtualNodes` times (`<member>#<i>`, SHA-1), and a key belongs
 * to the first member point at or after the key's own hash, going round.
 *
 * Every replica that builds a ring from the same members gets the same
 * owner for every key, with no coordination. When a member joins, it takes
 * over only the keys that now fall just before its points, about 1/N of
 * them, all from other members; when one leaves, only its keys move. SHA-1
 * is used because similar names (`obj-1`, `obj-2`) must land far apart:
 * FNV-1a clusters them and leaves one member with most of the keys.
 *
 * @param members The live members' identities; duplicates count once.
 * @param opts How many points each member takes.
 * @returns The ring.
 * @throws {TypeError} when a member is not a non-empty string or `virtualNodes` is not a positive integer.
 */
export function hashRing(members: Iterable<string>, opts: HashRingOptions = {}): HashRing {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`hashRing: options must be an object, got ${describeValue(opts)}`);
  const virtualNodes = opts.virtualNodes ?? 1_000;
  if (typeof virtualNodes !== 'number' || !Number.isInteger(virtualNodes) || virtualNodes < 1 || virtualNodes > MAX_VIRTUAL_NODES) {
    throw new TypeError(`virtualNodes: expected an integer from 1 to ${MAX_VIRTUAL_NODES}, got ${describeValue(opts.virtualNodes)}`);
  }
  const sorted = [...new Set(members)].sort();
  for (const m of sorted) if (typeof m !== 'string' || m === '') throw new TypeError(`hashRing: members must be non-empty strings, got ${describeValue(m)}`);
  const points = new Uint32Array(sorted.length * virtualNodes);
  const owners = new Uint32Array(points.length);
  const order: number[] = [];
  sorted.forEach((m, mi) => {
    for (let i = 0; i < virtualNodes; i++) {
      const p = mi * virtualNodes + i;
      points[p] = ringHash(`${m}#${i}`);
      owners[p] = mi;
      order.push(p);
    }
  });
  // Ties between two members' points go to the smaller name, so every replica breaks them alike.
  order.sort((a, b) => points[a]! - points[b]! || owners[a]! - owners[b]!);
  const ringPoints = Uint32Array.from(order, (p) => points[p]!);
  const ringOwners = Uint32Array.from(order, (p) => owners[p]!);
  return {
    members: sorted,
    ownerOf(key: string): string | undefined {
      if (ringPoints.length === 0) return undefined;
      const h = ringHash(key);
      let lo = 0;
      let hi = ringPoints.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ringPoints[mid]! < h) lo = mid + 1;
        else hi = mid;
      }
      return sorted[ringOwners[lo % ringPoints.length]!];
    },
  };
}
