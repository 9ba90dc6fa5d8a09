// Heap measurement. Needs `node --expose-gc`; without it, figures would
// include garbage and mean nothing, so this refuses to run.

import { setImmediate as tick } from 'node:timers/promises';

function gcFn(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('heap figures need `node --expose-gc` (npm run bench passes it)');
  return gc;
}

/** Collects until the heap stops shrinking, yielding between rounds so pending finalizers and timers run. */
export async function settle(): Promise<void> {
  const gc = gcFn();
  let last = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 6; round++) {
    gc();
    await tick();
    const used = process.memoryUsage().heapUsed;
    if (used >= last - 64 * 1024) break;
    last = used;
  }
}

/** Heap in use after a full collection, bytes. */
export async function heapAfterGc(): Promise<number> {
  await settle();
  return process.memoryUsage().heapUsed;
}

/** JS heap plus ArrayBuffer memory (Buffers live outside the JS heap), bytes. */
export function heapAndBuffers(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export const MiB = 2 ** 20;
