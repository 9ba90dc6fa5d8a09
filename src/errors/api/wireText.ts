// What an error may keep of text a server sent: escaped for a terminal, bounded, without the request's credential (HI-79).

import { printable } from '../printable.js';
import type { ApiStatus } from './KubeApiError.js';

/**
 * Removes the credential a request sent from text its answer holds: the
 * transport knows what it sent and gives each answer one of these (internal).
 */
export type Redact = (text: string) => string;

/** The server's characters one text of an error keeps, before escaping: client-go caps an unstructured error body at the same 2,048 bytes. */
export const MAX_WIRE_TEXT = 2048;

/**
 * The causes of a Status an error keeps: a 422 lists one per invalid field
 * and an apply conflict one per contested field (which `applyConflicts`
 * reads), so the bound is far above what a real answer holds.
 */
export const MAX_STATUS_CAUSES = 256;

/** The redaction of a request that sent no credential: text as it came. */
export const unchanged: Redact = (text) => text;

/** kube-apiserver writes some messages on several lines (an apply conflict lists its fields one a line): `\n` stays a line break. */
const LINES = { newlines: true } as const;

/**
 * `text` from a response as an error may hold it: the credential removed
 * first (so a cut cannot leave part of it), then cut to
 * {@link MAX_WIRE_TEXT} characters, then escaped with `printable`, line
 * breaks kept.
 */
export function wireText(text: string, redact: Redact = unchanged): string {
  const clear = redact(text);
  if (clear.length <= MAX_WIRE_TEXT) return printable(clear, LINES);
  const code = clear.charCodeAt(MAX_WIRE_TEXT - 1);
  // Never half a surrogate pair.
  const end = code >= 0xd800 && code <= 0xdbff ? MAX_WIRE_TEXT - 1 : MAX_WIRE_TEXT;
  return `${printable(clear.slice(0, end), LINES)}… (${clear.length - end} more characters left out)`;
}

type Json = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Only the keys whose value is defined, so a copy has no `key: undefined` a deep comparison would see. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The fields of a Status client-go's `metav1.Status` reads (kind,
 * apiVersion, status, message, reason, code, and details' name, group,
 * kind, uid, causes and retryAfterSeconds), each string through
 * {@link wireText}, at most {@link MAX_STATUS_CAUSES} causes; anything else
 * the body held, and any field of the wrong type, is left out.
 */
export function wireStatus(body: ApiStatus, redact: Redact = unchanged): ApiStatus {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? wireText(value, redact) : undefined);
  const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const raw: unknown = body.details;
  const details = isObject(raw)
    ? defined({
        name: text(raw['name']),
        group: text(raw['group']),
        kind: text(raw['kind']),
        uid: text(raw['uid']),
        causes: Array.isArray(raw['causes'])
          ? (raw['causes'] as unknown[])
              .slice(0, MAX_STATUS_CAUSES)
              .filter(isObject)
              .map((c) => defined({ reason: text(c['reason']), message: text(c['message']), field: text(c['field']) }))
          : undefined,
        retryAfterSeconds: num(raw['retryAfterSeconds']),
      })
    : undefined;
  return defined({
    kind: text(body.kind),
    apiVersion: text(body.apiVersion),
    status: text(body.status),
    message: text(body.message),
    reason: text(body.reason),
    code: num(body.code),
    details,
  });
}
