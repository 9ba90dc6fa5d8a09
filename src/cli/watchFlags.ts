import type { FifoMode } from '../informer/types.js';

/** The flags of `rxkube watch`, as parsed. */
export interface WatchFlags {
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly selector?: string;
  readonly fieldSelector?: string;
  /** Every `--context` given, in order; several watch several clusters. */
  readonly context?: readonly string[];
  readonly allContexts?: boolean;
  readonly kubeconfig?: string;
  readonly output: 'table' | 'json';
  readonly once?: boolean;
  /** ms `--once` waits for the sync. */
  readonly timeout: number;
  readonly simulator?: boolean;
  readonly objects: number;
  readonly churn: number;
  readonly seed: number;
  /** The informer's queue (`--fifo`). @default 'perKey' */
  readonly fifo?: FifoMode;
}
