import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerContext } from '../context.js';
import { discoveryDocument } from './discovery.js';
import { isCutFault, isStreamFault } from '../faults/faults.js';
import { deleteCollectionBody, listBody } from '../list/listing.js';
import { negotiate, watchView } from './negotiate.js';
import type { StoredObject } from '../storage/storedObject.js';
import { objectAnswer, preconditionsOf, readBody } from '../writes/objectHandlers.js';
import type { AuditEvent } from '../options.js';
import { acceptsGzip, sendJson, sendStatus, type Cut } from './respond.js';
import { DirectSink, TrickleSink, type Sink } from './sink.js';
import { StatusError } from './status.js';
import { tableJson, TableSink } from './table.js';
import { parsePath, verbOf, type Target } from './target.js';
import { injectedError } from '../watch/watch.js';
import { ACCESS_REVIEWS_PATH, accessReviewAnswer, TOKEN_REVIEWS_PATH, tokenReviewAnswer } from '../auth/reviews.js';
import { ADMIN, type UserInfo } from '../auth/users.js';
import { admitCollectionDelete, admittedAnswer, scaleAdmission } from '../admission/admittedWrite.js';
import { scaleAnswer } from '../writes/scale.js';
import { conversionWebhookFor, type ConversionWebhook } from '../admission/conversion.js';
import { bodyToStorage, convertedBody, convertedWrite, ConvertingSink, type ConvertedWrite } from '../admission/convertedBody.js';
import type { ResourceType } from '../storage/resources.js';
import { serveWatch } from '../watch/watchServing.js';
import { writeParams } from '../writes/writeParams.js';
import { timestamp } from '../writes/objectRules.js';

const METHOD_NOT_ALLOWED = 'the server does not allow this method on the requested resource';

/**
 * The simulator's request handler: authentication, discovery, the resource
 * path, request faults, content negotiation, then the verb. Whatever a
 * step throws is answered as a Status (a StatusError's own, else 500).
 *
 * @param ctx the server's shared state.
 * @returns a node `request` listener.
 */
export function createRequestHandler(ctx: ServerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const on: Audited = {};
    route(ctx, req, res, on).catch((err: unknown) => {
      const status = err instanceof StatusError ? err : new StatusError(500, 'InternalError', `Internal error occurred: ${String(err)}`);
      if (!res.headersSent && !res.destroyed) sendStatus(res, new DirectSink(res), status);
      else if (!res.destroyed) res.destroy();
      audit(ctx, on, status.code, status.reason, undefined);
    });
  };
}

/** The object request being served, once known, for the audit hook. */
interface Audited {
  verb?: AuditEvent['verb'];
  target?: Target;
}

function audit(ctx: ServerContext, on: Audited, code: number, reason: string | undefined, object: StoredObject | undefined): void {
  if (ctx.audit === undefined || on.verb === undefined || on.target === undefined) return;
  const { type, namespace, name } = on.target;
  try {
    ctx.audit({ verb: on.verb, resource: type.id, namespace, name: name ?? object?.name, code, reason, resourceVersion: object === undefined ? undefined : String(object.rv) });
  } catch {
    // A test's hook that throws must not take the server down with it.
  }
}

/** Who a bearer token is: the admin for the admin's tokens, a user of the `users` option, or nobody. */
function userOf(ctx: ServerContext, token: string): UserInfo | undefined {
  if (ctx.tokens?.has(token) === true) return ADMIN;
  return ctx.users.get(token);
}

async function route(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, on: Audited): Promise<void> {
  const user = ctx.tokens === undefined ? ADMIN : userOf(ctx, bearerToken(req.headers.authorization));
  if (user === undefined) throw new StatusError(401, 'Unauthorized', 'Unauthorized');
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const q = url.searchParams;
  const method = req.method ?? 'GET';
  if (url.pathname === TOKEN_REVIEWS_PATH || url.pathname === ACCESS_REVIEWS_PATH) {
    if (method !== 'POST') throw new StatusError(405, 'MethodNotAllowed', METHOD_NOT_ALLOWED);
    const body = await readBody(req);
    const answer = url.pathname === TOKEN_REVIEWS_PATH ? tokenReviewAnswer(body, (t) => userOf(ctx, t)) : accessReviewAnswer(body, ctx.authorize);
    sendJson(res, new DirectSink(res), 201, JSON.stringify(answer));
    return;
  }
  const discovery = discoveryDocument(url.pathname, ctx.registry, ctx.port());
  if (discovery !== undefined) {
    if (method !== 'GET') throw new StatusError(405, 'MethodNotAllowed', METHOD_NOT_ALLOWED);
    sendJson(res, new DirectSink(res), 200, JSON.stringify(discovery));
    return;
  }
  const { target, legacyWatch } = parsePath(url.pathname, ctx.registry);
  const isWatch = legacyWatch || q.get('watch') === 'true' || q.get('watch') === '1';
  const verb = verbOf(method, target.name !== undefined, isWatch);
  if (verb === undefined) throw new StatusError(405, 'MethodNotAllowed', METHOD_NOT_ALLOWED);
  if (verb !== 'list' && verb !== 'watch') Object.assign(on, { verb, target });

  // A request fault takes the request before anything else happens to it.
  // A cut fault is a stream fault unless it was armed for a named non-watch verb: then it cuts that response's body.
  const fault = ctx.faults.take(verb, target.type.id, (f, armedVerb) => !isStreamFault(f) || (isCutFault(f) && armedVerb !== '*' && armedVerb !== 'watch'));
  let sink: Sink = new DirectSink(res);
  let cut: Cut;
  let metadataLast = false;
  switch (fault?.type) {
    case 'status': {
      const retry = fault.retryAfterSeconds ?? (fault.status === 429 || fault.status === 503 ? 1 : undefined);
      const err = injectedError(fault.status, fault.reason, fault.message);
      const withRetry = retry === undefined ? err : new StatusError(err.code, err.reason, err.message, { ...err.status.details, retryAfterSeconds: retry });
      req.resume();
      sendStatus(res, sink, withRetry);
      audit(ctx, on, withRetry.code, withRetry.reason, undefined);
      return;
    }
    case 'stall':
      req.resume();
      ctx.stalled.add(res);
      res.once('close', () => ctx.stalled.delete(res));
      return;
    case 'trickle':
      sink = new TrickleSink(res, fault.bytesPerChunk, fault.intervalMs);
      break;
    case 'resetMidLine':
      cut = 'reset';
      break;
    case 'endMidLine':
      cut = 'end';
      break;
    case 'listMetadataLast':
      metadataLast = true;
      break;
    default:
      break;
  }
  // An Accept header nothing can satisfy is refused before the request is performed.
  const convert = negotiate(req.headers.accept, target.type, verb === 'watch');
  // Watches are never compressed, as kube-apiserver's watch server writes straight to the connection.
  const compress = ctx.compression && acceptsGzip(req.headers);
  // A Table is printed from the objects as they would be answered.
  const printed = (body: string): string => (convert?.kind === 'Table' ? tableJson(target.type, body, convert.apiVersion) : body);
  const send = (code: number, body: string): void => sendJson(res, sink, code, printed(body), cut, compress);
  // A custom resource read or written in a version its CRD converts with a webhook; metadata-only and Table answers need no conversion of the objects sent.
  const conversion = convert === undefined || convert.kind === 'Table' ? conversionWebhookFor(ctx.storage, ctx.registry, target.type) : undefined;
  const converted = (body: string): Promise<string> | string => (conversion === undefined ? body : convertedBody(conversion, target.type, body));

  switch (verb) {
    case 'list':
      if (method === 'DELETE') {
        const body = await readBody(req);
        if (ctx.admission.concerns(target.type)) await admitCollectionDelete(ctx, target, q, req, body, user, (text) => void res.appendHeader('Warning', warningHeader(text)));
        send(200, await converted(deleteCollectionBody(ctx, target, q, preconditionsOf(body), convert)));
      }
      else send(200, await converted(metadataLast ? withMetadataLast(listBody(ctx, target, q, convert)) : listBody(ctx, target, q, convert)));
      return;
    case 'watch': {
      req.resume();
      const printing = convert?.kind === 'Table' ? new TableSink(sink, target.type, convert.apiVersion) : sink;
      // Objects are converted before a Table is printed from them.
      serveWatch(ctx, target, q, res, conversion === undefined ? printing : new ConvertingSink(printing, conversion, target.type), watchView(convert));
      return;
    }
    default: {
      const write = await writeOf(ctx, conversion, verb, target, req, q);
      const written = { ...target, type: write.type };
      const warn = (text: string): void => void res.appendHeader('Warning', warningHeader(text));
      const admitted = write.verb !== 'get' && ctx.admission.concerns(written.type);
      const answer =
        admitted && target.subresource === 'scale' && (write.verb === 'update' || write.verb === 'patch')
          ? await scaleAnswer(ctx, write.verb, written, req, write.read, q, scaleAdmission(ctx, write.verb, written, q, req, user, warn))
          : admitted && target.subresource !== 'scale' && write.verb !== 'get'
            ? await admittedAnswer(ctx, write.verb, written, req, convert, q, user, warn, write.read)
            : await objectAnswer(ctx, write.verb, written, req, convert, q, write.read);
      send(answer.code, await converted(answer.body));
      audit(ctx, on, answer.code, undefined, answer.object);
    }
  }
}

/**
 * How a request on one object is performed: as asked, or, through a version
 * its CRD converts with a webhook, as a write of the storage version with
 * the body converted to it.
 */
async function writeOf(
  ctx: ServerContext,
  conversion: ConversionWebhook | undefined,
  verb: 'get' | ConvertedWrite['verb'],
  target: Target,
  req: IncomingMessage,
  q: URLSearchParams,
): Promise<{ verb: typeof verb; type: ResourceType; read: () => Promise<unknown> }> {
  const storageType = conversion?.storageType;
  if (conversion === undefined || verb === 'get') return { verb, type: target.type, read: () => readBody(req) };
  // The storage version is not served: the body is converted, and written through the version asked.
  if (storageType === undefined) return { verb, type: target.type, read: async () => bodyToStorage(conversion, target.type, await readBody(req)) };
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  const current = target.name === undefined ? undefined : ctx.storage.get(target.type, target.namespace ?? '', target.name)?.obj;
  const applier = {
    name: target.name ?? '',
    writer: () => {
      const params = writeParams(q, req, 'PatchOptions', true);
      return { manager: params.manager, force: params.force, subresource: target.subresource === 'status' ? ('status' as const) : undefined, time: timestamp(Date.now()) };
    },
  };
  return convertedWrite({ ...conversion, storageType }, verb, target.type, current, contentType, () => readBody(req), applier);
}

/** A warning as kube-apiserver sends it: code 299, no agent, the text quoted with `"` and `\\` escaped. */
function warningHeader(text: string): string {
  const escaped = text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - "${escaped}"`;
}

/** The token of an `Authorization: Bearer` header, '' for anything else. */
function bearerToken(header: string | undefined): string {
  return header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : '';
}

/** A list body with its metadata moved after its items (the listMetadataLast fault). */
function withMetadataLast(body: string): string {
  const { metadata, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify({ ...rest, metadata });
}
