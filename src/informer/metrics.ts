import { addCounters, copyCounters, zeroCounters } from '../reflector/counters.js';
import type { ReflectorCounters, ReflectorProbe } from '../reflector/types.js';

/**
 * A snapshot of an informer's metrics, the ones `rxkube/metrics` exports
 * (the Prometheus names are in brackets, each with the label
 * `resource="<name>"`). Counters cover the informer's whole life: a lifetime
 * that ended (its last subscriber left) keeps its counts, so they only grow,
 * as Prometheus counters must.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource } from 'rxkube';
 * import { type InformerMetrics } from 'rxkube/core';
 * import { KubeConfig } from '@kubernetes/client-node';
 *
 * const kc = new KubeConfig();
 * kc.loadFromDefault();
 * const pods = informer(kubeSource(kc, 'v1/pods'));
 * const m: InformerMetrics = pods.metrics();
 * console.log(`${m.objects} cached, ${m.reflector.relists} relists, ${m.reflector.retriesByKind.throttled} times throttled`);
 * ```
 */
export interface InformerMetrics {
  /** The informer's name [label `resource`]. */
  readonly name: string;
  /** The first list of the current lifetime has been applied [rxkube_informer_synced]. */
  readonly synced: boolean;
  /** Objects in the cache [rxkube_informer_objects]. */
  readonly objects: number;
  /**
   * The resourceVersion the informer would resume a watch from: the last list's, moved on by each event and bookmark
   * (client-go's LastSyncResourceVersion); `''` while idle [rxkube_informer_last_sync_resource_version, when numeric].
   */
  readonly lastSyncResourceVersion: string;
  /**
   * The reflector's counters over every lifetime [rxkube_informer_lists_total, _relists_total{reason},
   * _watches_total, _watch_restarts_total{reason}, _events_total, _decode_errors_total].
   */
  readonly reflector: ReflectorCounters;
  /** Errors met so far, everything sent on `errors$` [rxkube_informer_errors_total]. */
  readonly errors: number;
  /** Notifications waiting in handlers' buffers now [rxkube_informer_pending_notifications]. */
  readonly pendingNotifications: number;
}

/** What an informer keeps for metrics() (internal): the counts of ended lifetimes, and the running one's reflector. */
export class InformerMetricsRecorder {
  // Counts of the lifetimes that ended, so a restart does not take the totals back to zero.
  #ended: ReflectorCounters = zeroCounters();
  // The running lifetime's reflector, read only when metrics() is called.
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

  snapshot(name: string, synced: boolean, objects: number, errors: number, pendingNotifications: number): InformerMetrics {
    const probe = this.#probe;
    return {
      name,
      synced,
      objects,
      lastSyncResourceVersion: probe?.lastSyncResourceVersion ?? '',
      reflector: probe === undefined ? copyCounters(this.#ended) : addCounters(this.#ended, probe.counters()),
      errors,
      pendingNotifications,
    };
  }
}
