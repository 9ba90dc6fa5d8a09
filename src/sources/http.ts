import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { Agent, request, type Dispatcher } from 'undici';
import { ConnectionError } from './errors/ConnectionError.js';
import { DecodeError } from './errors/DecodeError.js';
import { KubeApiError, type StatusDetails } from './errors/KubeApiError.js';
import { connectionErrorFrom, errorFromStatus } from './httpErrors.js';

/** How much of an error response body is read to find its Status; a Status is a few hundred bytes. */
const MAX_ERROR_BODY = 64 * 1024;

const USER_AGENT = 'rxkube';

/**
 * Performs one GET against the cluster of `kc` and yields the response body
 * as byte chunks (internal; the hot path of every list and watch).
 *
 * Credentials, CA, client certificates and proxies come from client-node:
 * `applySecurityAuthentication` fills the request's headers (bearer token,
 * exec and OIDC plugins) and builds its undici dispatcher (TLS material,
 * HTTP/SOCKS proxy). That dispatcher is built afresh for every request, so
 * rotated certificates are picked up; rxkube therefore owns it and destroys
 * it when the request ends, which also guarantees that no socket outlives
 * its request (the price is one connection handshake per request).
 *
 * Non-200 answers throw the typed error of their Status. The idle timer
 * counts only while waiting for the server: no byte for `idleTimeoutMs` ends
 * the request with `ConnectionError` code `IDLE_TIMEOUT`. Aborting `signal`
 * destroys the socket at once and throws the signal's reason. `accept` is the
 * content negotiation (metadata-only lists and watches ask for
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
    }, idleTimeoutMs);
  };
  const disarm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  let dispatcher: Dispatcher | undefined;
  let body: Dispatcher.ResponseData['body'] | undefined;
  try {
    const ctx = new RequestContext(url, HttpMethod.GET);
    try {
      await kc.applySecurityAuthentication(ctx);
    } catch (cause) {
      // The message of an exec/OIDC failure is about the plugin; the cause stays for debugging but is not echoed.
      throw new ConnectionError(`${what}: could not obtain credentials from the kubeconfig`, { code: 'CREDENTIALS', cause: credentialFailure(cause) });
    }
    signal.throwIfAborted();
    dispatcher = (ctx.getDispatcher() as Dispatcher | undefined) ?? new Agent();
    arm();
    const res = await request(url, {
      method: 'GET',
      headers: { ...ctx.getHeaders(), accept, 'user-agent': USER_AGENT },
      dispatcher,
      signal: controller.signal,
      // rxkube's own idle timer replaces undici's, so that it can pause while the consumer holds a chunk.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    body = res.body;
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
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
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
    if (body !== undefined && !body.destroyed) body.destroy();
    if (dispatcher !== undefined) void dispatcher.destroy().catch(() => undefined);
  }
}

/**
 * What is kept of a credential plugin's failure: its class and code, never its
 * text. A plugin that prints a bare token instead of ExecCredential JSON would
 * otherwise leak it through the parser's message, and on a failed exit the
 * message is the plugin's stderr.
 */
function credentialFailure(cause: unknown): Error {
  const err = new Error(cause instanceof SyntaxError ? 'the exec plugin printed no valid ExecCredential JSON' : 'the credential plugin or provider failed');
  err.name = cause instanceof Error ? cause.name : 'Error';
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') Object.assign(err, { code });
  return err;
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
