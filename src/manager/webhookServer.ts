import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Observable } from 'rxjs';
import type { Webhook, WebhookAnswer } from '../admission/types.js';
import { printable } from '../errors/printable.js';
import { reportError } from '../errors/reportError.js';
import type { BindAddress } from './bindAddress.js';
import type { TlsPair } from './certificates/tlsPair.js';
import { parseRequestTarget } from './requestTarget.js';
import type { ServerLimits } from './serverLimits.js';
import { abandon, answerWithin, listenTls, writeAnswer, type Listening } from './servers.js';
import { WebhookRecorder } from './webhookMetrics.js';

/**
 * The webhook server: `webhooks` served over HTTPS at `at` with the certificates of `pairs`, within `limits`
 * (WH-60…). POST only (405), each webhook on its exact path (404), `Content-Type: application/json` (400 otherwise),
 * the body at most `limits.maxBodyBytes` (413, the rest unread), parsed once and handed to the webhook's `review`
 * with a signal that aborts when the client leaves. Nothing a client sends throws or rejects out of here.
 *
 * @param recorder where its metrics are kept and read; the manager keeps one across runs.
 * @returns the server once it listens.
 */
export function listenWebhooks(
  at: BindAddress,
  webhooks: readonly Webhook[],
  pairs: Observable<TlsPair>,
  limits: ServerLimits,
  recorder = new WebhookRecorder(webhooks.map((w) => w.path)),
): Promise<Listening> {
  // Each webhook's answer deadline is worked out once here, not per request.
  const routes = new Map(webhooks.map((w) => [w.path, { webhook: w, answerMs: answerTimeoutMs(w, limits.answerTimeoutMs) }]));
  const budget = bodyBudget(limits.maxBufferedBodyBytes);
  return listenTls('webhook', at, pairs, limits, (req, res) => {
    serveWebhook(req, res, routes, recorder, limits, budget).catch((err: unknown) => abandon(res, 'webhook', err));
  });
}

/**
 * The bytes of request bodies one server holds at once, over all its connections (WH-84): each request's share,
 * from the function returned, takes from it as its bytes arrive and gives them back once answered, and a request whose next chunk
 * does not fit is refused instead of read. `maxBodyBytes` bounds one body only: 64 connections each holding a body
 * just under it would hold 470 MB.
 */
function bodyBudget(max: number): () => BodyHold {
  let left = max;
  return () => {
    let held = 0;
    return {
      take: (n) => {
        if (n > left) return false;
        left -= n;
        held += n;
        return true;
      },
      release: () => {
        left += held;
        held = 0;
      },
    };
  };
}

/** One request's share of the server's body budget. */
interface BodyHold {
  /** Takes `n` more bytes; false (nothing taken) when the server holds too much already. */
  take(n: number): boolean;
  /** Gives back every byte taken; safe to call again. */
  release(): void;
}

interface Plain {
  readonly status: number;
  readonly message: string;
}

/** A served webhook and the time it is given to answer. */
interface Route {
  readonly webhook: Webhook;
  readonly answerMs: number;
}

async function serveWebhook(
  req: IncomingMessage,
  res: ServerResponse,
  routes: ReadonlyMap<string, Route>,
  recorder: WebhookRecorder,
  limits: ServerLimits,
  budget: () => BodyHold,
): Promise<void> {
  const target = parseRequestTarget(req.url ?? '');
  const route = target === undefined ? undefined : routes.get(target.path);
  if (target === undefined) return sendPlain(req, res, { status: 400, message: 'malformed request-target: expected an absolute path such as /convert' });
  if (req.method !== 'POST') return sendPlain(req, res, { status: 405, message: 'only POST is served' });
  if (route === undefined) return sendPlain(req, res, { status: 404, message: `no webhook at ${printable(target.path.slice(0, 200))}; served: ${[...routes.keys()].join(', ')}` });

  const { webhook, answerMs } = route;
  const path = webhook.path;
  const began = performance.now();
  recorder.started(path);
  let status = 500;
  let failure: string | undefined;
  // The body's bytes count against the server's budget until its answer is written (WH-84).
  const hold = budget();
  try {
    const refused = contentTypeRefusal(req.headers['content-type']) ?? lengthRefusal(req.headers['content-length'], limits.maxBodyBytes);
    if (refused !== undefined) {
      status = refused.status;
      return sendPlain(req, res, refused);
    }
    const body = await readBody(req, limits.maxBodyBytes, hold, limits.headersTimeoutMs);
    if (typeof body !== 'string') {
      status = body.status;
      return sendPlain(req, res, body);
    }
    const answer = await review(webhook, parse(body), res, answerMs);
    failure = answer.failure === undefined ? undefined : String(answer.failure).slice(0, 64);
    status = sendJson(res, answer);
  } finally {
    hold.release();
    recorder.ended(path, status, (performance.now() - began) / 1000, failure);
  }
}

/** controller-runtime answers any other content type with a 400 naming it; parameters (`; charset=utf-8`) are allowed here. */
function contentTypeRefusal(value: string | undefined): Plain | undefined {
  const type = (value ?? '').split(';', 1)[0]?.trim().toLowerCase();
  if (type === 'application/json') return undefined;
  return { status: 400, message: `contentType=${printable((value ?? '').slice(0, 100))}, expected application/json` };
}

function lengthRefusal(value: string | undefined, max: number): Plain | undefined {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) <= max) return undefined;
  return { status: 413, message: `request entity is too large; limit is ${max} bytes` };
}

/**
 * The body as text, or a refusal once it passes `max` bytes or the server's budget, or is not all there `withinMs`
 * after its headers (reading stops there), or the client left.
 */
function readBody(req: IncomingMessage, max: number, hold: BodyHold, withinMs: number): Promise<string | Plain> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let late: NodeJS.Timeout | undefined;
    const done = (v: string | Plain): void => {
      clearTimeout(late);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(v);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) {
        req.pause();
        done({ status: 413, message: `request entity is too large; limit is ${max} bytes` });
        return;
      }
      if (!hold.take(chunk.length)) {
        req.pause();
        done({ status: 503, message: 'the server holds too many request bodies now; try again' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => done(size === 0 ? { status: 400, message: 'request body is empty' } : (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)).toString('utf8'));
    const onClose = (): void => done({ status: 499, message: 'the client left' });
    req.on('data', onData);
    // on, not once: done() takes all three off, and once would wrap each in another closure.
    req.on('end', onEnd);
    req.on('close', onClose);
    // WH-90: an upload that trickles holds its share of the budget no longer than a slow header would hold a connection.
    late = setTimeout(() => {
      req.pause();
      done({ status: 408, message: `the request body did not arrive within ${withinMs} ms` });
    }, withinMs);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * How long the server waits for a webhook's answer (WH-64): `answerTimeoutMs`, or longer for an admission webhook
 * whose `timeoutSeconds` is longer, so its handler deadline (a little under that) is reached and answered first.
 */
function answerTimeoutMs(webhook: Webhook, limit: number): number {
  const seconds: unknown = webhook.timeoutSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? Math.max(limit, Math.ceil(seconds * 1000)) : limit;
}

/** The webhook's answer; its signal aborts when the client leaves, or after `ms` with a TimeoutError (then a 503). */
function review(webhook: Webhook, body: unknown, res: ServerResponse, ms: number): Promise<WebhookAnswer> {
  const late: WebhookAnswer = { status: 503, body: { message: `no answer within ${ms} ms` }, failure: 'timeout' };
  const threw = (err: unknown): WebhookAnswer => ({ status: 500, body: { message: printable(err instanceof Error ? err.message : String(err)) }, failure: 'threw' });
  return answerWithin(res, ms, (signal) => webhook.review(body, signal), late, threw);
}

/** Writes the answer as JSON; a body JSON cannot write (a cycle, a BigInt) or a status out of range is a 500. Returns the status sent. */
function sendJson(res: ServerResponse, answer: WebhookAnswer): number {
  let status = Number.isInteger(answer.status) && answer.status >= 200 && answer.status <= 599 ? answer.status : 500;
  let text: string | undefined;
  try {
    text = JSON.stringify(answer.body);
  } catch (err) {
    reportError(new Error(`manager: a webhook answered with a body that is not JSON: ${(err as Error).message}`, { cause: err }));
  }
  if (text === undefined || status !== answer.status) {
    status = 500;
    text = JSON.stringify({ message: 'the webhook gave an answer that cannot be sent' });
  }
  writeAnswer(res, { status, contentType: 'application/json', body: text }, 'POST', false);
  return status;
}

function sendPlain(req: IncomingMessage, res: ServerResponse, p: Plain): void {
  // A body left unread cannot be drained for a next request: the connection ends with the answer.
  writeAnswer(res, { status: p.status, contentType: 'application/json', body: JSON.stringify({ message: p.message }) }, 'POST', !req.complete);
  if (p.status === 408 || p.status === 413 || p.status === 503) res.once('finish', () => req.socket.destroy());
}
