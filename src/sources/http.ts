import type { KubeConfig } from '@kubernetes/client-node';
import { send, type TransportResponse } from '../transport/send.js';
import { ConnectionError } from './errors/ConnectionError.js';
import { DecodeError } from './errors/DecodeError.js';
import { KubeApiError, type StatusDetails } from './errors/KubeApiError.js';
import { connectionErrorFrom, errorFromStatus } from './httpErrors.js';
import { timerDelay } from '../options/timerDelay.js';

/** How much of an error response body is read to find its Status; a Status is a few hundred bytes. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * Performs one GET against the cluster of `kc` and yields the response body
 * as byte chunks (internal; the hot path of every list and watch).
 *
 * The request goes through the process's connection pool for its cluster,
 * TLS material and transport options (see `send`): credentials (bearer
 * token, exec and OIDC plugins) are applied to this request alone, the
 * connection is shared, and a compressed answer is inflated chunk by chunk.
 *
 * Non-200 answers throw the typed error of their Status. The idle timer
 * counts only while waiting for the server: no byte for `idleTimeoutMs` ends
 * the request with `ConnectionError` code `IDLE_TIMEOUT`. Aborting `signal`
 * ends the request at once and throws the signal's reason. `accept` is
 * the content negotiation (metadata-only lists and watches ask for
 * PartialObjectMetadata).
 */
export async function* getBody(
  kc: KubeConfig,
  url: string,
  what: string,
  signal: AbortSignal,
  idleTimeoutMs: number,
  accept = 'application/json',
): AsyncGenerator<Buffer, void, undefined> {
  signal.throwIfAborted();
  // One controller per request, fed by the caller's signal and the idle timer; a listener (removed at the end)
  // rather than AbortSignal.any keeps a long-lived caller signal from accumulating dependants.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    timer = setTimeout(() => {
      controller.abort(new ConnectionError(`${what}: no data from the server for ${idleTimeoutMs} ms`, { code: 'IDLE_TIMEOUT' }));
    }, timerDelay(idleTimeoutMs));
  };
  const disarm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  let res: TransportResponse | undefined;
  try {
    arm();
    res = await send(kc, { method: 'GET', url, what, accept, signal: controller.signal });
    if (res.statusCode !== 200) {
      const status = await readStatus(res.body);
      const retryAfter = res.headers['retry-after'];
      throw errorFromStatus(res.statusCode, status, {
        what,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      });
    }
    disarm();
    arm();
    for await (const chunk of res.body) {
      disarm();
      yield chunk;
      arm();
    }
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (controller.signal.aborted) throw controller.signal.reason;
    if (err instanceof KubeApiError || err instanceof DecodeError || err instanceof ConnectionError) throw err;
    throw connectionErrorFrom(err, what);
  } finally {
    disarm();
    signal.removeEventListener('abort', onAbort);
    res?.close();
  }
}

async function readStatus(body: AsyncIterable<Buffer>): Promise<StatusDetails | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= MAX_ERROR_BODY) break;
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as StatusDetails) : undefined;
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
