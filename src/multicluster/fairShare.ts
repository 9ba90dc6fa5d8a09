// The slots of a multi-cluster controller, shared round-robin between
// clusters (MC-11). Internal. Each cluster has its own work queue; a worker
// of a cluster must hold a slot to reconcile, and a freed slot goes to the
// next cluster in turn that is waiting, so a cluster with a backlog of
// thousands gets one reconcile per round like a cluster with one key.

/** A reconcile of one cluster waiting for a slot. */
interface Waiter {
  readonly grant: () => void;
  readonly refuse: (reason: unknown) => void;
}

/** A fixed number of slots, granted to waiting clusters in turn. */
export class FairShare {
  #free: number;
  // Waiting reconciles per cluster, first come first served within a cluster.
  readonly #waiting = new Map<string, Waiter[]>();
  // Clusters with someone waiting, in the order they get the next slots: a cluster served goes to the back.
  readonly #turns: string[] = [];
  // Slots held now, per cluster, for metrics.
  readonly #held = new Map<string, number>();

  /** @param slots how many reconciles run at once over every cluster. */
  constructor(slots: number) {
    this.#free = slots;
  }

  /** Slots `cluster` holds now. */
  active(cluster: string): number {
    return this.#held.get(cluster) ?? 0;
  }

  /** Reconciles of `cluster` waiting for a slot. */
  waiting(cluster: string): number {
    return this.#waiting.get(cluster)?.length ?? 0;
  }

  /**
   * Waits for a slot for `cluster`.
   *
   * @param cluster whose reconcile it is.
   * @param signal gives up waiting when it aborts (rejecting with its reason).
   * @returns a function that gives the slot back; call it once.
   */
  acquire(cluster: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0 && this.#turns.length === 0) return Promise.resolve(this.#take(cluster));
    return new Promise<() => void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#forget(cluster, waiter);
        reject(signal.reason);
      };
      const waiter: Waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#take(cluster));
        },
        refuse: (reason) => {
          signal.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.#waiting.get(cluster);
      if (queue === undefined) {
        this.#waiting.set(cluster, [waiter]);
        this.#turns.push(cluster);
      } else queue.push(waiter);
    });
  }

  /** Refuses every reconcile of `cluster` still waiting (the cluster is leaving). */
  refuse(cluster: string, reason: unknown): void {
    const queue = this.#waiting.get(cluster);
    if (queue === undefined) return;
    this.#waiting.delete(cluster);
    this.#turns.splice(this.#turns.indexOf(cluster), 1);
    for (const w of queue) w.refuse(reason);
  }

  #take(cluster: string): () => void {
    this.#free--;
    this.#held.set(cluster, this.active(cluster) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const held = this.active(cluster) - 1;
      if (held === 0) this.#held.delete(cluster);
      else this.#held.set(cluster, held);
      this.#free++;
      this.#next();
    };
  }

  /** A slot is free: the cluster whose turn it is gets it, and goes to the back of the line if it has more waiting. */
  #next(): void {
    const cluster = this.#turns.shift();
    if (cluster === undefined) return;
    const queue = this.#waiting.get(cluster) as Waiter[];
    const waiter = queue.shift() as Waiter;
    if (queue.length === 0) this.#waiting.delete(cluster);
    else this.#turns.push(cluster);
    waiter.grant();
  }

  #forget(cluster: string, waiter: Waiter): void {
    const queue = this.#waiting.get(cluster);
    if (queue === undefined) return;
    const i = queue.indexOf(waiter);
    if (i === -1) return;
    queue.splice(i, 1);
    if (queue.length === 0) {
      this.#waiting.delete(cluster);
      this.#turns.splice(this.#turns.indexOf(cluster), 1);
    }
  }
}
