import type { KubeConfig } from '@kubernetes/client-node';
import { send, type TransportResponse } from '../transport/send.js';
import { ConnectionError } from '../errors/api/ConnectionError.js';
import { DecodeError } from '../errors/api/DecodeError.js';
import { KubeApiError, type ApiStatus } from '../errors/api/KubeApiError.js';
import { connectionErrorFrom, errorFromStatus } from './httpErrors.js';
import { timerDelay } from '../options/timerDelay.js';
import { followSignals } from '../options/followSignals.js';
import type { Redact } from '../errors/api/wireText.js';
import { MiB } from './wireLimits.js';

/** How much of an error response body is read to find its Status; a Status is a few hundred bytes. */
const MAX_ERROR_BODY = 64 * 1024;

/** A list's bounds on its one response: bytes, and time waiting for them (HI-24, HI-26). */
export interface ListBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly timeoutPerMiBMs: number;
}

/**
 * Shared by a watch body and its decoder: the decoder sets `made` after a
 * chunk that completed an event, and only then does the idle timer start
 * over (HI-27). The body sets `redact` once the request is answered, so
 * the decoder tells an ERROR event without the credential sent (HI-79).
 */
export interface Progress {
  made: boolean;
  redact?: Redact | undefined;
}

/** How {@link getBody} reads one answer. */
export interface BodyOptions {
  /** Time waiting for the server without progress (a byte; for a watch, an event) that ends the request. */
  readonly idleTimeoutMs: number;
  /** The content negotiation (metadata-only lists and watches ask for PartialObjectMetadata). @default 'application/json' */
  readonly accept?: string | undefined;
  /** A list's bounds; a watch has none on its size or length. */
  readonly list?: ListBounds | undefined;
  /** A watch's event progress; without it every byte is progress. */
  readonly progress?: Progress | undefined;
}

/**
 * Performs one GET against the cluster of `kc` and yields the response body
 * as byte chunks (internal; the hot path of every list and watch).
 *
 * The request goes through the process's connection pool for its cluster,
 * TLS material and transport options (see `send`): credentials (bearer
 * token, exec and OIDC plugins) are applied to this request alone, the
 * connection is shared, and a compressed answer is inflated chunk by chunk.
 *
 * Non-200 answers throw the typed error of their Status. The clocks count
 * only while waiting for the server, never while the consumer holds a
 * chunk: `idleTimeoutMs` without progress ends the request with
 * `ConnectionError` code `IDLE_TIMEOUT` (progress is any byte, or for a
 * watch given `progress`, a complete event); a list also ends with
 * `ConnectionError` code `TIMEOUT` once its waiting passes `timeoutMs` plus
 * `timeoutPerMiBMs` for every MiB received, and with a `DecodeError` of code
 * `LIST_TOO_LARGE` past `maxBytes`. Aborting `signal` ends the request at
 * once and throws the signal's reason.
 */
export async function* getBody(kc: KubeConfig, url: string, what: string, signal: AbortSignal, opts: BodyOptions): AsyncGenerator<Buffer, void, undefined> {
  signal.throwIfAborted();
  const { idleTimeoutMs, list, progress } = opts;
  // One signal per request, fed by the caller's signal and the timers; released at the end, so a long-lived caller
  // signal keeps nothing of it.
  const controller = followSignals(signal);
  // One timer, re-armed only when it fires early: a chunk costs two clock reads, not a timer cancelled and made.
  let timer: NodeJS.Timeout | undefined;
  /** Milliseconds waited since the last progress, and in all; when the current wait began; bytes received. */
  let idleWaited = 0;
  let totalWaited = 0;
  let since = 0;
  let waiting = false;
  let received = 0;
  /** How long the current wait may still last before the idle or the list clock runs out, and which would. */
  const left = (now: number): { readonly ms: number; readonly idle: boolean } => {
    const waited = waiting ? now - since : 0;
    const idleLeft = idleTimeoutMs - idleWaited - waited;
    const listLeft = list === undefined ? Infinity : list.timeoutMs + (received / MiB) * list.timeoutPerMiBMs - totalWaited - waited;
    return { ms: Math.min(idleLeft, listLeft), idle: idleLeft <= listLeft };
  };
  // Each clock only ever runs out later than it was due when the timer was set (waiting counts at most at the wall
  // clock's pace, progress resets the idle clock and bytes extend the list's), so the timer never fires late.
  const check = (): void => {
    timer = undefined;
    // The consumer holds a chunk: the clocks are stopped, and the next wait sets the timer again.
    if (!waiting) return;
    const { ms, idle } = left(Date.now());
    if (ms > 0) {
      timer = setTimeout(check, timerDelay(ms));
      return;
    }
    if (idle) {
      const silence = progress === undefined ? 'no data' : 'no complete event';
      controller.abort(new ConnectionError(`${what}: ${silence} from the server for ${idleTimeoutMs} ms`, { code: 'IDLE_TIMEOUT' }));
    } else {
      const mib = (received / MiB).toFixed(1);
      controller.abort(new ConnectionError(`${what}: the list took longer than listTimeoutMs plus listTimeoutPerMiBMs for the ${mib} MiB received`, { code: 'TIMEOUT' }));
    }
  };
  const arm = (): void => {
    since = Date.now();
    waiting = true;
    timer ??= setTimeout(check, timerDelay(left(since).ms));
  };
  const disarm = (): void => {
    if (!waiting) return;
    waiting = false;
    const waited = Date.now() - since;
    idleWaited += waited;
    totalWaited += waited;
  };
  let res: TransportResponse | undefined;
  try {
    arm();
    res = await send(kc, { method: 'GET', url, what, accept: opts.accept ?? 'application/json', signal: controller.signal, chunkByChunk: progress !== undefined });
    if (res.statusCode !== 200) {
      const status = await readStatus(res.body);
      const retryAfter = res.headers['retry-after'];
      throw errorFromStatus(res.statusCode, status, {
        what,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        redact: res.redact,
      });
    }
    if (progress !== undefined) progress.redact = res.redact;
    disarm();
    idleWaited = 0;
    arm();
    for await (const chunk of res.body) {
      disarm();
      received += chunk.length;
      if (list !== undefined && received > list.maxBytes) {
        throw new DecodeError(`${what}: the list body is larger than maxListBytes (${list.maxBytes} bytes)`, '', received, { code: 'LIST_TOO_LARGE' });
      }
      yield chunk;
      if (progress === undefined) idleWaited = 0;
      else if (progress.made) {
        idleWaited = 0;
        progress.made = false;
      }
      arm();
    }
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    // A deadline that ended the wait for credentials is told as a credential failure: the server was never asked.
    if (err instanceof ConnectionError && err.code === 'CREDENTIALS') throw err;
    if (controller.signal.aborted) throw controller.signal.reason;
    if (err instanceof KubeApiError || err instanceof DecodeError || err instanceof ConnectionError) throw err;
    throw connectionErrorFrom(err, what);
  } finally {
    disarm();
    clearTimeout(timer);
    controller.release();
    res?.close();
  }
}

async function readStatus(body: AsyncIterable<Buffer>): Promise<ApiStatus | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= MAX_ERROR_BODY) break;
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as ApiStatus) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * client-node refuses a plain `http:` server unless the kubeconfig also says
 * `insecure-skip-tls-verify`, a flag that means nothing without TLS; kubectl
 * and client-go accept such servers (`kubectl proxy`, local test servers),
 * and so does rxkube. The view answers the current cluster with that flag
 * set for `http:` servers only; `https:` servers are untouched.
 */
export function plainHttpAllowed(kc: KubeConfig): KubeConfig {
  const view = Object.create(kc) as KubeConfig;
  view.getCurrentCluster = () => {
    const cluster = kc.getCurrentCluster();
    return cluster !== null && cluster.server.startsWith('http:') && cluster.skipTLSVerify !== true ? { ...cluster, skipTLSVerify: true } : cluster;
  };
  return view;
}
