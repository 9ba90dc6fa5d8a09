import { isConflict } from '../errors/api/guards.js';
import { microTime } from './elector.js';
import type { ResourceLock } from './types.js';
import { timerDelay } from '../options/timerDelay.js';

/**
 * Empties the holder of a lock this replica holds, with a 1 s duration, so a successor need not wait out the
 * lease (LE-5); conditional on the version read, so a newer holder's record is never overwritten. For callers
 * that must know when the hand-over is written (the elector's own release on unsubscribe is not awaited).
 */
export async function releaseLock(lock: ResourceLock<unknown>, identity: string, timeoutMs: number): Promise<void> {
  const signal = AbortSignal.timeout(timerDelay(timeoutMs));
  for (let attempt = 0; attempt < 2; attempt++) {
    const read = await lock.get(signal);
    if (read === undefined || read.record.holderIdentity !== identity) return;
    const stamp = microTime(Date.now());
    try {
      await lock.update({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp, leaderTransitions: read.record.leaderTransitions }, read.version, signal);
      return;
    } catch (err) {
      // A renewal sent just before the elector stopped may have landed since the read: read again.
      if (!isConflict(err)) throw err;
    }
  }
}
