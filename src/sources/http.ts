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
 * The undici dispatcher shared by the page requests of one list (internal),
 * alive from the list's first request until `signal`, the list's own signal
 * (`isListSignal`), aborts; the abort destroys it and its socket at once.
 */
export class ListConnection {
  /** The first request's dispatcher, kept for the rest of the list; undefined before it and after the end. */
  #dispatcher: Dispatcher | undefined;
  /** The list's signal: once aborted, nothing more is kept. */
  readonly #signal: AbortSignal;
  /** When the kept socket is free again (see {@link ListConnection.ready}). */
  #ready: Promise<void> = Promise.resolve();

  /** @param signal The list's signal; its abort ends the connection. */
  constructor(signal: AbortSignal) {
    this.#signal = signal;
    signal.addEventListener('abort', () => this.#end(), { once: true });
  }

  /**
   * Resolves once the kept socket can carry the next request. undici hands a
   * kept-alive socket back to its pool one event-loop turn after the response
   * ended (to see whether the server closes it after all); a request sent
   * sooner finds the socket busy and opens a second connection.
   */
  get ready(): Promise<void> {
    return this.#ready;
  }

  /**
   * Called as a request on the kept dispatcher ends. undici has by then
   * queued the socket's return to its pool; the immediate queued here runs
   * right after it, so the next page goes out as soon as it can, ahead of
   * anything its consumer queues meanwhile.
   */
  released(): void {
    this.#ready = new Promise<void>((resolve) => setImmediate(resolve));
  }

  /**
   * The dispatcher a request of the list uses: `fresh` (the one client-node
   * just built for it) for the first request, which the connection then
   * keeps; the kept one for later requests, `fresh` being destroyed unused.
   * After the list ended, `fresh` is handed back and not kept.
   *
   * @param fresh This request's own dispatcher.
   * @returns The dispatcher to send with, and whether the connection owns it (else the request must destroy it).
   */
  take(fresh: Dispatcher): { readonly dispatcher: Dispatcher; readonly shared: boolean } {
    if (this.#signal.aborted) return { dispatcher: fresh, shared: false };
    if (this.#dispatcher === undefined) {
      this.#dispatcher = fresh;
    } else if (fresh !== this.#dispatcher) {
      destroyDispatcher(fresh);
    }
    return { dispatcher: this.#dispatcher, shared: true };
  }

  #end(): void {
    if (this.#dispatcher !== undefined) destroyDispatcher(this.#dispatcher);
    this.#dispatcher = undefined;
  }
}

/**
 * Performs one GET against the cluster of `kc` and yields the response body
 * as byte chunks (internal; the hot path of every list and watch).
 *
 * Credentials, CA, client certificates and proxies come from client-node:
 * `applySecurityAuthentication` fills the request's headers (bearer token,
 * exec and OIDC plugins) and builds an undici dispatcher (TLS material,
 * HTTP/SOCKS proxy). Headers are taken afresh for every request. The
 * dispatcher is this request's own, destroyed when the request ends, unless
 * `connection` is given: then the page requests of one list share the
 * dispatcher of the list's first request (one kept-alive connection, one
 * handshake), which the list's end destroys. Either way certificates are
 * re-read for every watch and every list, and no socket outlives its request,
 * or its list.
 *
 * Non-200 answers throw the typed error of their Status. The idle timer
 * counts only while waiting for the server: no byte for `idleTimeoutMs` ends
 * the request with `ConnectionError` code `IDLE_TIMEOUT`. Aborting `signal`
 * destroys the socket at once and throws the signal's reason. `accept` is
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
  connection?: ListConnection,
): AsyncGenerator<Buffer, void, undefined> {
  if (connection !== undefined) await connection.ready;
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
  // Whether the list's connection owns the dispatcher, so this request must not destroy it.
  let shared = false;
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
    const fresh = (ctx.getDispatcher() as Dispatcher | undefined) ?? new Agent();
    if (connection === undefined) {
      dispatcher = fresh;
    } else {
      ({ dispatcher, shared } = connection.take(fresh));
    }
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
    if (dispatcher !== undefined && !shared) destroyDispatcher(dispatcher);
    if (shared) connection?.released();
  }
}

/** Closes a dispatcher's sockets at once; requests still on it fail (their callers have already given up). */
function destroyDispatcher(dispatcher: Dispatcher): void {
  void dispatcher.destroy().catch(() => undefined);
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
