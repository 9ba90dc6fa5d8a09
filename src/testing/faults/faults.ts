import { describeValue, numberOption } from '../../options/validate.js';

/**
 * A fault the simulator can inject, told apart by `type`:
 * - `status`: answer with an error Status instead of serving the request;
 * - `stall`: accept the request and say nothing at all (no headers) until the client gives up;
 * - `trickle`: serve the normal response, `bytesPerChunk` bytes every `intervalMs`;
 * - `resetMidLine`: write half of the next event line (or half of a response body), then destroy the socket;
 * - `endMidLine`: write half of the next event line (or half of a response body), then end the response
 *   cleanly: the client sees a well-formed end of stream in the middle of a line (a truncated body);
 * - `malformedLine`: write one garbage line before the next real watch event;
 * - `errorEvent`: send a watch ERROR event carrying a Status, then end the stream;
 * - `silentWatch`: a watch that goes quiet: it answers 200 (when taken as it opens) and from then on sends
 *   nothing at all — no events, no bookmarks, not even the end at `timeoutSeconds` — while the connection
 *   stays open, until the client gives up, `closeWatches()` ends it or the server stops. Taken by an open
 *   watch, it goes quiet from its next object event on;
 * - `listMetadataLast`: serve the next list with its `metadata` (resourceVersion, continue token) after its
 *   `items`, as a server other than kube-apiserver may write it; kube-apiserver writes it first. Only a list
 *   takes it.
 *
 * ## Example
 * ```ts
 * import { startApiServer } from 'rxkube/testing';
 *
 * const server = await startApiServer();
 * server.faults.inject({ type: 'status', status: 503 }, { verb: 'list' }); // the next list is refused
 * server.faults.inject({ type: 'endMidLine' }, { verb: 'watch' }); // the next watch event is cut short
 * server.faults.inject({ type: 'silentWatch' }, { verb: 'watch', resource: 'v1/pods' }); // the next pod watch opens, then says nothing
 * server.faults.inject({ type: 'listMetadataLast' }, { verb: 'list', times: Infinity });
 * ```
 */
export type Fault =
  | {
      readonly type: 'status';
      /** HTTP status code: 429, 500, 503, 410, 401, 403 or any other. */
      readonly status: number;
      /** Sent as the `Retry-After` header and `details.retryAfterSeconds`. @default 1 for 429 and 503, none otherwise */
      readonly retryAfterSeconds?: number;
      /** Status reason. @default kube-apiserver's reason for the code (`TooManyRequests`, `InternalError`…) */
      readonly reason?: string;
      /** Status message. @default a message naming the injected fault */
      readonly message?: string;
    }
  | { readonly type: 'listMetadataLast' }
  | { readonly type: 'stall' }
  | { readonly type: 'trickle'; readonly bytesPerChunk: number; readonly intervalMs: number }
  | { readonly type: 'resetMidLine' }
  | { readonly type: 'endMidLine' }
  | {
      readonly type: 'malformedLine';
      /** The garbage. @default `{"type":"ADDED","object":{"kind":` (a truncated JSON object) */
      readonly line?: string;
    }
  | {
      readonly type: 'errorEvent';
      /** The Status code. @default 410 (reason Expired) */
      readonly status?: number;
      /** Status reason. @default kube-apiserver's reason for the code */
      readonly reason?: string;
      /** Status message. @default a message naming the injected fault */
      readonly message?: string;
    }
  | { readonly type: 'silentWatch' };

/** One kind of fault, by its `type`. */
export type FaultOf<K extends Fault['type']> = Extract<Fault, { readonly type: K }>;

/** The request kinds a fault can target. `patch` is an addition to the kube verbs of the contract. */
export type FaultVerb = 'list' | 'watch' | 'get' | 'create' | 'update' | 'patch' | 'delete' | '*';

/** Which requests a fault hits, and how many times. */
export interface FaultTarget {
  /** @default '*' */
  readonly verb?: FaultVerb;
  /** `v1/pods`, `apps/v1/deployments`…; @default every resource */
  readonly resource?: string;
  /** How many requests (or watch lines) take the fault before it is used up. @default 1 */
  readonly times?: number;
}

/** A pending fault and how many more times it fires. */
export interface ArmedFault {
  readonly fault: Fault;
  readonly verb: FaultVerb;
  readonly resource: string | undefined;
  remaining: number;
}

const VERBS: readonly FaultVerb[] = ['list', 'watch', 'get', 'create', 'update', 'patch', 'delete', '*'];

/** Faults that act on the lines of an open watch rather than on a request as it arrives. */
export function isStreamFault(f: Fault): f is FaultOf<'resetMidLine' | 'endMidLine' | 'malformedLine' | 'errorEvent' | 'silentWatch'> {
  return f.type === 'resetMidLine' || f.type === 'endMidLine' || f.type === 'malformedLine' || f.type === 'errorEvent' || f.type === 'silentWatch';
}

/** Faults a watch takes as it opens, before its first line. */
export function isWatchOpenFault(f: Fault): f is FaultOf<'errorEvent' | 'silentWatch'> {
  return f.type === 'errorEvent' || f.type === 'silentWatch';
}

/** Faults that cut a response; armed for a named non-watch verb they cut that response's body. */
export function isCutFault(f: Fault): f is FaultOf<'resetMidLine' | 'endMidLine'> {
  return f.type === 'resetMidLine' || f.type === 'endMidLine';
}

/** Checks a fault and its target, throwing a TypeError that names the bad option. */
export function validateFault(fault: Fault, target: FaultTarget | undefined): ArmedFault {
  if (fault === null || typeof fault !== 'object') throw new TypeError(`faults.inject: fault must be an object, got ${describeValue(fault)}`);
  switch (fault.type) {
    case 'status':
    case 'errorEvent':
      // An error event's status is optional (410 Gone); a status fault's is not.
      const code = fault.type === 'errorEvent' && fault.status === undefined ? 410 : fault.status;
      if (code === undefined || !Number.isInteger(code) || code < 400 || code > 599) {
        throw new TypeError(`faults.inject: fault.status must be an HTTP error code (400-599), got ${describeValue(fault.status)}`);
      }
      if (fault.type === 'status') numberOption('faults.inject', 'fault.retryAfterSeconds', fault.retryAfterSeconds, 0, { integer: true });
      break;
    case 'trickle':
      if (!Number.isInteger(fault.bytesPerChunk) || fault.bytesPerChunk < 1) {
        throw new TypeError(`faults.inject: fault.bytesPerChunk must be a positive integer, got ${describeValue(fault.bytesPerChunk)}`);
      }
      if (typeof fault.intervalMs !== 'number' || !(fault.intervalMs >= 0) || !Number.isFinite(fault.intervalMs)) {
        throw new TypeError(`faults.inject: fault.intervalMs must be a non-negative number, got ${describeValue(fault.intervalMs)}`);
      }
      break;
    case 'malformedLine':
      if (fault.line !== undefined && typeof fault.line !== 'string') {
        throw new TypeError(`faults.inject: fault.line must be a string, got ${describeValue(fault.line)}`);
      }
      break;
    case 'listMetadataLast':
      if (target?.verb !== 'list') throw new TypeError(`faults.inject: a listMetadataLast fault acts on lists; verb must be 'list', got ${describeValue(target?.verb ?? '*')}`);
      break;
    case 'stall':
    case 'resetMidLine':
    case 'endMidLine':
    case 'silentWatch':
      break;
    default:
      throw new TypeError(`faults.inject: unknown fault type ${JSON.stringify((fault as { type?: unknown }).type)}`);
  }
  const verb = target?.verb ?? '*';
  if (!VERBS.includes(verb)) throw new TypeError(`faults.inject: verb must be one of ${VERBS.join(', ')}, got ${describeValue(verb)}`);
  if ((fault.type === 'malformedLine' || fault.type === 'errorEvent' || fault.type === 'silentWatch') && verb !== '*' && verb !== 'watch') {
    throw new TypeError(`faults.inject: a ${fault.type} fault acts on watches; verb must be 'watch' or '*', got ${describeValue(verb)}`);
  }
  const times = target?.times ?? 1;
  if (!(Number.isInteger(times) && times >= 1) && times !== Infinity) {
    throw new TypeError(`faults.inject: times must be a positive integer or Infinity, got ${describeValue(times)}`);
  }
  const resource = target?.resource;
  if (resource !== undefined && (typeof resource !== 'string' || resource === '')) {
    throw new TypeError(`faults.inject: resource must be a resource name like 'v1/pods', got ${describeValue(resource)}`);
  }
  return { fault, verb, resource, remaining: times };
}

/**
 * The pending faults. Request faults (status, stall, trickle, and
 * resetMidLine / endMidLine armed for a named non-watch verb) are taken by the next matching request;
 * stream faults are taken by the next line a matching watch writes, whether
 * that watch was open before the fault was injected or not.
 */
export class FaultBoard {
  // In injection order, so the oldest matching fault fires first.
  #armed: ArmedFault[] = [];
  // A cheap check on the watch hot path: most of the time nothing is armed.
  #streamCount = 0;

  add(armed: ArmedFault): void {
    this.#armed.push(armed);
    if (isStreamFault(armed.fault)) this.#streamCount++;
  }

  clear(): void {
    this.#armed = [];
    this.#streamCount = 0;
  }

  /** How many faults are armed (each counted once, however many times it still fires). */
  get pending(): number {
    return this.#armed.length;
  }

  get hasStreamFaults(): boolean {
    return this.#streamCount > 0;
  }

  /** Takes one firing of the first armed fault matching the request and `accept` (given the fault and the verb it was armed for). */
  take(verb: Exclude<FaultVerb, '*'>, resource: string, accept: (f: Fault, armedVerb: FaultVerb) => boolean): Fault | undefined {
    for (let i = 0; i < this.#armed.length; i++) {
      const a = this.#armed[i] as ArmedFault;
      if (a.verb !== '*' && a.verb !== verb) continue;
      if (a.resource !== undefined && a.resource !== resource) continue;
      if (!accept(a.fault, a.verb)) continue;
      a.remaining--;
      if (a.remaining <= 0) {
        this.#armed.splice(i, 1);
        if (isStreamFault(a.fault)) this.#streamCount--;
      }
      return a.fault;
    }
    return undefined;
  }
}
