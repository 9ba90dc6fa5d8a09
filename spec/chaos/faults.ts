import type { ApiServer } from 'rxkube/testing';
import type { Rng } from '../helpers/random.js';

/** What a fault recipe may use: the server, the seed's draws, how many informers it must bite, and a write they all see. */
export interface FaultContext {
  readonly server: ApiServer;
  readonly rng: Rng;
  /**
   * How many informers watch pods: a fault taken by one request is armed this many times, so it bites each once
   * (the chaos suite runs two, the soak one).
   */
  readonly informers: number;
  /** Writes synchronously an object inside the selector, so every informer's watch carries the event. */
  touch(): void;
}

/** One kind of fault: how to cause it so that it bites every informer once, and whether it is a stall. */
export interface FaultKind {
  readonly name: string;
  /** Convergence after it is bounded by stall detection (plus the usual target), not by the target alone. */
  readonly stall: boolean;
  /**
   * Causes the fault. Armed faults are taken by the next matching request or watch event; the caller nudges
   * them with writes until `faults.pending()` is 0. Resolves when the fault is in place (a restart: when the
   * server listens again).
   */
  cause(ctx: FaultContext): Promise<void> | void;
}

const PODS = 'v1/pods';

/**
 * The faults table: every fault the simulator can inject that an informer
 * must survive, each caused in the way that makes it bite (a status fault on
 * a watch needs a watch to be opened, hence `closeWatches()` after arming it).
 */
export const FAULT_KINDS: readonly FaultKind[] = [
  { name: 'watch-drop', stall: false, cause: ({ server }) => server.faults.closeWatches() },
  { name: 'connection-reset', stall: false, cause: ({ server }) => server.faults.resetConnections() },
  {
    name: 'reset-mid-line',
    stall: false,
    cause: ({ server, informers }) => server.faults.inject({ type: 'resetMidLine' }, { verb: 'watch', resource: PODS, times: informers }),
  },
  {
    name: 'truncated-line',
    stall: false,
    cause: ({ server, informers }) => server.faults.inject({ type: 'endMidLine' }, { verb: 'watch', resource: PODS, times: informers }),
  },
  {
    name: 'malformed-line',
    stall: false,
    cause: ({ server, informers }) => server.faults.inject({ type: 'malformedLine' }, { verb: 'watch', resource: PODS, times: informers }),
  },
  {
    name: '410-at-watch-start',
    stall: false,
    cause: ({ server, informers }) => {
      server.faults.inject({ type: 'status', status: 410 }, { verb: 'watch', resource: PODS, times: informers });
      server.faults.closeWatches();
    },
  },
  {
    name: '410-mid-stream',
    stall: false,
    cause: ({ server, informers }) => server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', resource: PODS, times: informers }),
  },
  {
    // The watches are cut on an event and the history compacted past it in the same turn: each informer comes back
    // from a resourceVersion the server no longer has, gets 410 and relists.
    name: 'compaction',
    stall: false,
    cause: (ctx) => {
      ctx.server.faults.inject({ type: 'endMidLine' }, { verb: 'watch', resource: PODS, times: ctx.informers });
      ctx.touch();
      ctx.server.compact();
    },
  },
  {
    name: '429-retry-after',
    stall: false,
    cause: ({ server, rng, informers }) => {
      server.faults.inject({ type: 'status', status: 429, retryAfterSeconds: rng.int(1, 2) }, { verb: 'watch', resource: PODS, times: informers });
      server.faults.closeWatches();
    },
  },
  {
    name: '500-on-watch',
    stall: false,
    cause: ({ server, informers }) => {
      server.faults.inject({ type: 'status', status: 500 }, { verb: 'watch', resource: PODS, times: informers });
      server.faults.closeWatches();
    },
  },
  {
    // A 410 forces a relist, which meets 503 with Retry-After.
    name: '503-on-relist',
    stall: false,
    cause: ({ server, informers }) => {
      server.faults.inject({ type: 'status', status: 503 }, { verb: 'list', resource: PODS, times: informers });
      server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', resource: PODS, times: informers });
    },
  },
  {
    // A 410 forces a relist, whose body is cut in half and ended cleanly.
    name: 'truncated-list',
    stall: false,
    cause: ({ server, informers }) => {
      server.faults.inject({ type: 'endMidLine' }, { verb: 'list', resource: PODS, times: informers });
      server.faults.inject({ type: 'errorEvent', status: 410 }, { verb: 'watch', resource: PODS, times: informers });
    },
  },
  {
    // The next watch requests are accepted and never answered: no headers, no bytes.
    name: 'stalled-request',
    stall: true,
    cause: ({ server, informers }) => {
      server.faults.inject({ type: 'stall' }, { verb: 'watch', resource: PODS, times: informers });
      server.faults.closeWatches();
    },
  },
  {
    // Open watches go quiet on their next event and stay open past their timeoutSeconds.
    name: 'silent-watch',
    stall: true,
    cause: ({ server, informers }) => server.faults.inject({ type: 'silentWatch' }, { verb: 'watch', resource: PODS, times: informers }),
  },
  {
    name: 'restart',
    stall: false,
    cause: ({ server, rng }) => server.restart({ downMs: rng.int(100, 1000) }),
  },
];

/** A fault kind by name. */
export function faultKind(name: string): FaultKind {
  const kind = FAULT_KINDS.find((k) => k.name === name);
  if (kind === undefined) throw new RangeError(`unknown fault kind ${JSON.stringify(name)}; known: ${FAULT_KINDS.map((k) => k.name).join(', ')}`);
  return kind;
}
