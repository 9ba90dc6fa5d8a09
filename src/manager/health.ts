import type { Controller } from '../controller/controller.js';
import type { ControllerSource } from '../controller/types.js';
import type { Informer } from '../informer/informer.js';
import type { ReflectorStatus } from '../reflector/types.js';
import { printable } from '../errors/printable.js';

/** What the probes read of an informer: its name and its status now (whether it synced among it). */
export type ProbedInformer = Pick<Informer<unknown>, 'name' | 'status'>;

/** One line of a probe's answer. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string | undefined;
}

/** What a running manager shows the probes. */
export interface ProbeView {
  readonly controllers: readonly Controller<unknown>[];
  readonly informers: readonly ProbedInformer[];
  /** Controller sources that are not informers (no status to read): only whether they synced. */
  readonly otherSources: readonly { readonly name: string; synced(): boolean }[];
  readonly maxSilenceMs: number;
  /** How long an informer may go without a synced cache, from its start or from losing its sync, before /healthz fails it. */
  readonly maxInitialSyncMs: number;
  /** Since when the informer has had no synced cache, on the probes' clock; undefined while synced or before it started. */
  unsyncedSince(informer: ProbedInformer): number | undefined;
  /** When the manager saw the informer synced (the first list in), on the probes' clock; undefined before. */
  syncedAt(informer: ProbedInformer): number | undefined;
  now(): number;
  /** The controllers run here (no leader election, or this replica leads). */
  controllersRun(): boolean;
  /** A graceful stop began. */
  stopping(): boolean;
  /** Whether the webhook server listens yet; absent when the manager serves no webhooks (WH-89). */
  webhookServerListening?(): boolean;
}

/** True for a controller source that is an rxkube informer, whose status the probes can read. */
export function isInformer(source: ControllerSource<unknown>): source is ControllerSource<unknown> & ProbedInformer {
  // addHandler tells an informer from other sources that have a name and a status.
  const s = source as Partial<Informer<unknown>>;
  return typeof s.addHandler === 'function' && typeof s.status === 'function' && typeof s.name === 'string';
}

const seconds = (ms: number): string => `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;

/** An error in one line, as the informer's reporter prints it: the name and the first line of the message. */
function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.split('\n', 1)[0] ?? ''}`;
  return String(err);
}

/** What the reflector is doing, in words. */
function describeReflector(r: ReflectorStatus | undefined): string {
  if (r === undefined) return 'not started';
  switch (r.state) {
    case 'listing':
      return `listing (${r.mode})`;
    case 'watching':
      return `watching from resourceVersion ${r.resourceVersion || '(latest)'}`;
    case 'backoff':
      return `retrying in ${seconds(r.delayMs)} after ${r.error === undefined ? 'the server ended the watch early' : errorText(r.error)}`;
    case 'relisting':
      return `relisting (${r.reason})`;
    case 'error':
      return `error ${errorText(r.error)}`;
  }
}

/** The state and the last error of an informer, for a failed line. */
function informerState(i: ProbedInformer): string {
  const s = i.status();
  const last = s.lastError === undefined || (s.reflector?.state === 'backoff' && s.reflector.error === s.lastError) ? '' : `; last error ${errorText(s.lastError)}`;
  return `${describeReflector(s.reflector)}${last}`;
}

/** A check that fails naming `problem`, or passes when there is none. */
const check = (name: string, problem: string | undefined): Check => ({ name, ok: problem === undefined, detail: problem });

/**
 * `/readyz`: every cache the controllers read has synced, and where the
 * controllers run, each is past its sync gate (MG-4); the webhook server, when
 * there is one, listens (WH-89). Failing while a stop is under way takes the
 * pod out of its Services.
 */
export function readiness(v: ProbeView): Check[] {
  const running = v.controllersRun();
  // WH-89: the Service must not route the API server's calls to a pod where nothing listens on the webhook port.
  const listening = v.webhookServerListening?.();
  return [
    ...(v.stopping() ? [check('manager', 'shutting down')] : []),
    ...(listening === undefined ? [] : [check('webhook server', listening ? undefined : 'not listening yet (waiting for its first certificate)')]),
    ...v.informers.map((i) => check(`informer ${i.name}`, i.status().synced ? undefined : `not synced: ${informerState(i)}`)),
    ...v.otherSources.map((s) => check(`source ${s.name}`, s.synced() ? undefined : 'not synced')),
    ...v.controllers.map((c): Check => {
      if (!running) return { name: `controller ${c.name}`, ok: true, detail: 'standby (not leading)' };
      const state = c.status().state;
      return check(`controller ${c.name}`, state === 'running' ? undefined : state === 'waitingForSync' ? 'waiting for its informers to sync' : `state ${state}`);
    }),
  ];
}

/**
 * `/healthz` and `/livez`: no synced informer's cache has gone without being
 * shown current (a watch event, a bookmark or a list) for longer than
 * `maxSilenceMs` since it synced (MG-5) — its watch went silent — nor is
 * lagging, behind the server past its `maxLagMs` (HI-58), nor has an
 * informer stayed unsynced past `maxInitialSyncMs` (HI-13); and no
 * controller has a reconcile stuck past its `reconcileTimeoutMs` (MG-6).
 */
export function liveness(v: ProbeView): Check[] {
  const now = v.now();
  return [
    ...v.informers.map((i) => check(`informer ${i.name}`, informerProblem(v, i, now))),
    ...v.controllers.map((c) => {
      const s = c.status();
      if (s.stuck.length > 0) return check(`controller ${c.name}`, `reconcile stuck past reconcileTimeoutMs: ${s.stuck.join(', ')}`);
      return check(`controller ${c.name}`, s.state !== 'failed' ? undefined : `failed${s.lastError === undefined ? '' : `: ${errorText(s.lastError)}`}`);
    }),
  ];
}

/** Why an informer fails `/healthz`, or undefined when it does not. */
function informerProblem(v: ProbeView, i: ProbedInformer, now: number): string | undefined {
  // HI-13: a first list that never ends (or always fails) is judged, but only after a bound a very large list fits in.
  const unsyncedSince = v.unsyncedSince(i);
  if (unsyncedSince !== undefined && now - unsyncedSince > v.maxInitialSyncMs) {
    return `not synced for ${seconds(now - unsyncedSince)} (limit maxInitialSyncMs ${seconds(v.maxInitialSyncMs)}): ${informerState(i)}`;
  }
  // A cache behind the server past the informer's maxLagMs (HI-58): backing off, failing or stalled.
  const s = i.status();
  if (s.lagging && s.behindSince !== undefined) return `behind the server for ${seconds(now - s.behindSince)} (past its maxLagMs): ${informerState(i)}`;
  // Until the first list is in, /readyz says why; a slow first list of a big cache is no reason to restart before the bound above.
  const syncedAt = v.syncedAt(i);
  const silentFor = now - (syncedAt === undefined ? now : Math.max(syncedAt, s.currentAt ?? -Infinity));
  if (silentFor <= v.maxSilenceMs) return undefined;
  return `not shown current by a watch event, bookmark or list for ${seconds(silentFor)} (limit ${seconds(v.maxSilenceMs)}): ${informerState(i)}`;
}

/**
 * A probe's answer: 200 when every check passed, else 503; one line per check, then the verdict. A check's
 * detail (an error's message, stuck keys) is only written when `verbose` (`?verbose`, as Kubernetes' own
 * /healthz), since anyone who reaches the pod IP may ask (HI-8); control characters are escaped either way.
 */
export function render(probe: 'readyz' | 'healthz' | 'livez', checks: readonly Check[], verbose = false): { readonly status: number; readonly body: string } {
  const ok = checks.every((c) => c.ok);
  const lines = checks.map((c) => {
    const detail = verbose && c.detail !== undefined ? `: ${c.detail}` : '';
    return printable(`[${c.ok ? '+' : '-'}]${c.name} ${c.ok ? 'ok' : 'failed'}${detail}`);
  });
  lines.push(`${probe} check ${ok ? 'passed' : 'failed'}`);
  return { status: ok ? 200 : 503, body: `${lines.join('\n')}\n` };
}
