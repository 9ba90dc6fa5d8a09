import { addCounters, copyCounters, zeroCounters } from '../reflector/counters.js';
import type { ReflectorCounters, ReflectorProbe } from '../reflector/types.js';

/**
 * What an informer keeps for the counters of its status (internal): the counts of ended lifetimes, and the running
 * one's reflector.
 */
export class InformerMetricsRecorder {
  // Counts of the lifetimes that ended, so a restart does not take the totals back to zero.
  #ended: ReflectorCounters = zeroCounters();
  // The running lifetime's reflector, read only when a status is taken.
  #probe: ReflectorProbe | undefined;

  /** A lifetime's reflector started. */
  started(probe: ReflectorProbe): void {
    this.ended();
    this.#probe = probe;
  }

  /** The running lifetime ended: its counts join the totals. Idempotent. */
  ended(): void {
    if (this.#probe === undefined) return;
    this.#ended = addCounters(this.#ended, this.#probe.counters());
    this.#probe = undefined;
  }

  /** The counters over every lifetime, and the resourceVersion a watch would resume from (`''` while idle). */
  snapshot(): { readonly counters: ReflectorCounters; readonly lastSyncResourceVersion: string } {
    const probe = this.#probe;
    return {
      counters: probe === undefined ? copyCounters(this.#ended) : addCounters(this.#ended, probe.counters()),
      lastSyncResourceVersion: probe?.lastSyncResourceVersion ?? '',
    };
  }
}
