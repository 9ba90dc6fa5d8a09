import type { KubeObject } from '../store/types.js';

/**
 * Options of `recorder`.
 *
 * ## Example
 * ```ts
 * import { recorder } from 'rxkube';
 * import { type EventRecorderOptions } from 'rxkube/core';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const opts: EventRecorderOptions = { reportingController: 'example.com/widget-controller', reportingInstance: process.env.POD_NAME ?? 'local' };
 * const events = recorder(kc, opts);
 * ```
 */
export interface EventRecorderOptions {
  /** Who records: a qualified name such as `example.com/widget-controller` (the Event's `reportingController`). */
  readonly reportingController: string;
  /** Which replica records: the pod name, usually (`reportingInstance`, at most 128 characters). */
  readonly reportingInstance: string;
  /**
   * Events a single object may have written in a burst, and the most it saves up; one more is allowed each
   * `refillIntervalMs` (client-go's spam filter: 25, and one every 5 minutes).
   * @default 25
   */
  readonly burst?: number;
  /** Milliseconds for one object to earn one more event write. @default 300_000 */
  readonly refillIntervalMs?: number;
  /**
   * A repeat of an event (same object, type, reason, action and note) within this many milliseconds of its last
   * occurrence updates that event's series instead of creating an Event (client-go's 6 minutes).
   * @default 360_000
   */
  readonly seriesWindowMs?: number;
  /** Event writes waiting at most; a publish that would need one more is dropped and reported. @default 1_000 */
  readonly maxPending?: number;
  /** Milliseconds one write may take. @default 10_000 */
  readonly timeoutMs?: number;
  /**
   * Where write failures and dropped events are reported, at most once per kind of failure every
   * `reportIntervalMs`, with how many were held back.
   * @default the process-wide error reporter (`setErrorReporter`)
   */
  readonly onError?: (err: Error) => void;
  /** The least time between two reports of one kind of failure. @default 30_000 */
  readonly reportIntervalMs?: number;
  /** Aborting it closes the recorder, as {@link EventRecorder.close} does. @default undefined */
  readonly signal?: AbortSignal;
  /** The clock (milliseconds since the epoch), for tests. @default Date.now */
  readonly now?: () => number;
}

/**
 * What happened, as {@link EventRecorder.publish} records it.
 *
 * ## Example
 * ```ts
 * import type { EventDetails } from 'rxkube/core';
 *
 * const scaled: EventDetails = { type: 'Normal', reason: 'Scaled', action: 'Reconcile', note: 'replicas 2 → 3' };
 * ```
 */
export interface EventDetails {
  /** `Normal`, or `Warning` for what a human should look at. */
  readonly type: 'Normal' | 'Warning';
  /** Why, in UpperCamelCase: `Scaled`, `FailedCreate` (at most 128 characters). */
  readonly reason: string;
  /** What the controller did or failed to do: `Reconcile`, `Create` (at most 128 characters). */
  readonly action: string;
  /** A human-readable sentence; cut to 1 KiB. @default '' */
  readonly note?: string;
  /** A second object the event is about (the pod a deployment's event names). @default undefined */
  readonly related?: KubeObject;
}

/**
 * Records Kubernetes Events (`events.k8s.io/v1`) about objects, as
 * client-go's `EventRecorder` and kube-rs's `Recorder` do. Created by
 * {@link recorder}.
 *
 * ## Example
 * ```ts
 * import { recorder } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 * import type { KubeObject } from 'rxkube';
 * declare const widget: KubeObject;
 *
 * const events = recorder(kc, { reportingController: 'example.com/widget-controller', reportingInstance: 'widget-controller-0' });
 * events.publish(widget, { type: 'Normal', reason: 'Synced', action: 'Reconcile', note: 'all children up to date' });
 * await events.close();
 * ```
 */
export interface EventRecorder {
  /**
   * Records an event about `regarding`, which needs its `apiVersion`, `kind` and `metadata.name`. Returns at
   * once: the write happens in the background. Never throws: a malformed event is reported and dropped.
   */
  publish(regarding: KubeObject, event: EventDetails): void;
  /** Stops taking events, writes those already published, and resolves once nothing is left (no timer remains). */
  close(): Promise<void>;
  /** Counters of what the recorder has done since it was made (`recorder(kc, opts).status().written`). */
  status(): {
    /** Calls of publish. */
    readonly published: number;
    /** Events created and series updated on the server. */
    readonly written: number;
    /** Publishes folded into a write already waiting (a repeat counted in the series it updates). */
    readonly folded: number;
    /** Publishes not written because their object used up its burst (a repeat still counts in its series). */
    readonly rateLimited: number;
    /** Publishes dropped: the queue was full, the recorder closed, or the event was malformed. */
    readonly dropped: number;
    /** Writes the server or the network refused. */
    readonly failed: number;
    /** Writes waiting or in flight. */
    readonly pending: number;
    /** True once close() was called or the signal aborted. */
    readonly closed: boolean;
  };
}
