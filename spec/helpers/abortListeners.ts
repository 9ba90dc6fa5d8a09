import { getEventListeners } from 'node:events';
import { vi } from 'vitest';

/**
 * Runs `work` noting every AbortSignal a listener is put on meanwhile, and returns the most 'abort' listeners one
 * of them still holds afterwards: a way to see listeners pile up on a signal a spec cannot reach (a run's, a
 * cluster's), and so a signal follower that is never released.
 */
export async function mostAbortListenersAfter(work: () => Promise<unknown>): Promise<number> {
  const listened = new Set<AbortSignal>();
  const add = EventTarget.prototype.addEventListener;
  const spy = vi.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (this: EventTarget, ...args: Parameters<typeof add>) {
    if (this instanceof AbortSignal) listened.add(this);
    add.apply(this, args);
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return Math.max(0, ...[...listened].map((s) => getEventListeners(s, 'abort').length));
}
