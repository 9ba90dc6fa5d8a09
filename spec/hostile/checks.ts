import {
  BufferOverflowError,
  CacheSyncError,
  ConnectionError,
  DecodeError,
  HandlerError,
  KubeApiError,
  ReadYourWritesTimeoutError,
  ReconcileTimeoutError,
  TerminalError,
} from 'rxkube';
import {
  CallbackError,
  InitialEventsIncompleteError,
  KeyError,
  TransformError,
  VeryShortWatchError,
  WatchDeadlineExceededError,
  WatchStalledError,
} from 'rxkube/core';

/**
 * What the tier requires of every error the library reports under hostile
 * input: one of its own classes, and a message (and every cause's message)
 * with no raw control character and no credential.
 */

/** The library's error classes a fault may be reported as. */
const LIBRARY_ERRORS: readonly (abstract new (...args: never[]) => Error)[] = [
  KubeApiError,
  DecodeError,
  ConnectionError,
  VeryShortWatchError,
  WatchStalledError,
  WatchDeadlineExceededError,
  ReadYourWritesTimeoutError,
  InitialEventsIncompleteError,
  KeyError,
  TransformError,
  BufferOverflowError,
  HandlerError,
  CacheSyncError,
  CallbackError,
  TerminalError,
  ReconcileTimeoutError,
];

/** C0 controls but tab and newline, DEL, and C1 controls: what a terminal or a log line must never receive raw. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;

/** One problem found with one reported error; `group` says which rule it broke, for the report. */
export interface ErrorProblem {
  readonly group: string;
  readonly detail: string;
}

function messages(err: unknown, depth = 0): string[] {
  if (!(err instanceof Error) || depth > 5) return err === undefined || err instanceof Error ? [] : [String(err)];
  return [err.message, ...messages(err.cause, depth + 1)];
}

const visible = (s: string): string => JSON.stringify(s.length > 160 ? `${s.slice(0, 160)}…` : s);

/** The problems with one error reported at `where` (errors$, reconcile, reporter…); empty when it is fine. */
export function checkError(err: unknown, where: string, secrets: readonly string[]): ErrorProblem[] {
  const problems: ErrorProblem[] = [];
  const name = err instanceof Error ? err.constructor.name : typeof err;
  if (!LIBRARY_ERRORS.some((c) => err instanceof c)) {
    problems.push({ group: `untyped error ${name}`, detail: `${where}: ${name}: ${visible(err instanceof Error ? err.message : String(err))}` });
  }
  for (const m of messages(err)) {
    if (CONTROL.test(m)) problems.push({ group: `control characters in a ${name} message`, detail: `${where}: ${visible(m)}` });
    for (const s of secrets) if (m.includes(s)) problems.push({ group: `credential in a ${name} message`, detail: `${where}: the bearer token appears in ${visible(m.replaceAll(s, '<TOKEN>'))}` });
  }
  return problems;
}
