// The soak's liveness criterion: how long the store has gone without a write the server made, counting only
// the time the server was healthy. A store that is deaf while the server answers is what the heap and the final
// convergence checks cannot see: stopping the faults at the end lets any informer catch up.

/** What the simulator side reports at each sample. Times are wall-clock milliseconds, shared by both processes. */
export interface ServerProgress {
  /** The resourceVersion of the newest write the server made. */
  readonly rv: number;
  /**
   * Milliseconds the server has been unhealthy for the informer since the run began, up to now: a fault armed
   * until the informer took it, a restart under way. A fault armed now counts until it ends; if it is cleared
   * untaken its time is withdrawn, so this may go down.
   */
  readonly unhealthyMs: number;
}

/** The store's lag at one sample. */
export interface Lag {
  /** When the sample was taken. */
  readonly at: number;
  /** Age of the oldest write the store has not seen (0: it has seen every write of an earlier sample). */
  readonly ms: number;
  /** The part of that age the server was healthy: what the criterion judges. */
  readonly healthyMs: number;
  /** Writes the server made that the store has not seen. */
  readonly writes: number;
}

/**
 * Tracks the store's lag behind the server from samples of both: the
 * server's newest resourceVersion at each sample time, and the store's
 * `lastSyncResourceVersion()` read just after. The lag is the age of the
 * oldest sampled server version the store has not reached, so a store that
 * follows within one sample period shows none, and one that stands still
 * shows a lag that grows with the wall clock.
 */
export class LagMeter {
  // Server versions the store had not reached at their sample, oldest first.
  readonly #unseen: { readonly at: number; readonly rv: number; readonly unhealthyMs: number }[] = [];
  // Every sample's time and store resourceVersion, preallocated so the trace does not show as heap growth.
  readonly #traceAt: Float64Array;
  readonly #traceRv: Float64Array;
  #traced = 0;
  // The largest lags so far, overall and while the server was healthy.
  #worst: Lag = { at: 0, ms: 0, healthyMs: 0, writes: 0 };
  #worstHealthy: Lag = { at: 0, ms: 0, healthyMs: 0, writes: 0 };

  /** @param capacity how many samples the trace keeps (later ones still count for the lag). */
  constructor(capacity: number) {
    this.#traceAt = new Float64Array(capacity);
    this.#traceRv = new Float64Array(capacity);
  }

  /** Records one sample taken at `at`: the server's progress, then the store's resourceVersion. */
  sample(at: number, server: ServerProgress, storeRv: number): Lag {
    if (server.rv > storeRv) this.#unseen.push({ at, rv: server.rv, unhealthyMs: server.unhealthyMs });
    while (this.#unseen.length > 0 && (this.#unseen[0]?.rv ?? 0) <= storeRv) this.#unseen.shift();
    const oldest = this.#unseen[0];
    const ms = oldest === undefined ? 0 : at - oldest.at;
    // Time a fault was armed or a restart under way does not count: the informer could not have done better.
    const healthyMs = oldest === undefined ? 0 : Math.min(ms, Math.max(0, ms - (server.unhealthyMs - oldest.unhealthyMs)));
    const lag: Lag = { at, ms, healthyMs, writes: Math.max(0, server.rv - storeRv) };
    if (this.#traced < this.#traceAt.length) {
      this.#traceAt[this.#traced] = at;
      this.#traceRv[this.#traced] = storeRv;
      this.#traced++;
    }
    if (lag.ms > this.#worst.ms) this.#worst = lag;
    if (lag.healthyMs > this.#worstHealthy.healthyMs) this.#worstHealthy = lag;
    return lag;
  }

  /** The largest lag seen, whatever the server's health. */
  get worst(): Lag {
    return this.#worst;
  }

  /** The largest lag seen while the server was healthy: what the criterion judges. */
  get worstHealthy(): Lag {
    return this.#worstHealthy;
  }

  /** The first sample at or after `from` at which the store had reached `rv`; undefined if none did. */
  caughtUpAt(from: number, rv: number): number | undefined {
    for (let i = 0; i < this.#traced; i++) {
      const at = this.#traceAt[i] as number;
      if (at >= from && (this.#traceRv[i] as number) >= rv) return at;
    }
    return undefined;
  }
}
