import type { KubeConfig } from '@kubernetes/client-node';
import { send, type TransportResponse } from '../transport/send.js';
import { jsonText } from '../store/jsonText.js';
import { ConnectionError } from '../errors/api/ConnectionError.js';
import { DecodeError } from '../errors/api/DecodeError.js';
import { KubeApiError, type ApiStatus } from '../errors/api/KubeApiError.js';
import { connectionErrorFrom, errorFromStatus } from '../sources/httpErrors.js';
import { timerDelay } from '../options/timerDelay.js';
import { followSignals } from '../options/followSignals.js';

/** The HTTP methods of single-object calls. */
export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request of an object client. */
export interface JsonRequest {
  readonly verb: Verb;
  readonly url: string;
  /** `replace v1/configmaps default/x`: the start of every error message. */
  readonly what: string;
  /** Sent as JSON when defined. */
  readonly body: unknown;
  /** @default 'application/json' when there is a body */
  readonly contentType?: string | undefined;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
}

/** Bodies larger than this are not objects a client of single objects should hold; they fail to decode. */
const MAX_BODY = 64 * 1024 * 1024;

/**
 * Sends one request with the kubeconfig's credentials and answers the parsed
 * JSON of a 2xx response (internal).
 *
 * As for list and watch, credentials are applied to this request alone and
 * the connection comes from the process's pool for the cluster and its TLS
 * material (see `send`), so a write costs no handshake while another
 * request keeps the pool open. Non-2xx answers throw the typed error of
 * their Status; transport failures a `ConnectionError`; `signal` aborts with
 * its reason; the whole exchange is bounded by `timeoutMs`.
 */
export async function sendJson<R>(kc: KubeConfig, req: JsonRequest): Promise<R> {
  const { signal, what } = req;
  signal?.throwIfAborted();
  // One signal per request, fed by the caller's signal and the timeout, so both cut the socket the same way.
  const controller = followSignals(signal);
  const timer = setTimeout(() => {
    controller.abort(new ConnectionError(`${what}: no complete answer within ${req.timeoutMs} ms`, { code: 'TIMEOUT' }));
  }, timerDelay(req.timeoutMs));
  let res: TransportResponse | undefined;
  try {
    // jsonText, not JSON.stringify: an object as deep as kube-apiserver allows (10,000 levels) overflows the stack of the latter.
    const payload = req.body === undefined ? undefined : typeof req.body === 'object' && req.body !== null ? jsonText(req.body) : JSON.stringify(req.body);
    res = await send(kc, {
      method: req.verb,
      url: req.url,
      what,
      accept: 'application/json',
      body: payload,
      contentType: payload === undefined ? undefined : (req.contentType ?? 'application/json'),
      signal: controller.signal,
    });
    const text = await readText(res.body, what);
    if (res.statusCode < 200 || res.statusCode > 299) {
      const retryAfter = res.headers['retry-after'];
      throw errorFromStatus(res.statusCode, parseStatus(text), {
        what,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        redact: res.redact,
      });
    }
    try {
      return JSON.parse(text) as R;
    } catch (cause) {
      throw new DecodeError(`${what}: the answer is not JSON`, text, 0, { cause });
    }
  } catch (err) {
    if (signal?.aborted === true) throw signal.reason;
    // A deadline that ended the wait for credentials is told as a credential failure: the server was never asked.
    if (err instanceof ConnectionError && err.code === 'CREDENTIALS') throw err;
    if (controller.signal.aborted) throw controller.signal.reason;
    if (err instanceof KubeApiError || err instanceof DecodeError || err instanceof ConnectionError) throw err;
    throw connectionErrorFrom(err, what);
  } finally {
    clearTimeout(timer);
    controller.release();
    res?.close();
  }
}

async function readText(body: AsyncIterable<Buffer>, what: string): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY) throw new DecodeError(`${what}: the answer is larger than ${MAX_BODY} bytes`, '', size);
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

function parseStatus(text: string): ApiStatus | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as ApiStatus) : undefined;
  } catch {
    return undefined;
  }
}
