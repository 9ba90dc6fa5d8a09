/**
 * Where an error goes when nobody asked for it: every building block takes an
 * `onError` callback, and when the user gave none, errors come here, so that
 * no failure is ever silent.
 */

import { describeValue } from '../options/validate.js';
import { printable } from './printable.js';
import { heldBack, Throttle } from './throttle.js';

/** Receives errors a stream survived (or could not survive). */
export type ErrorSink = (err: Error) => void;

/** Options of {@link createStderrReporter}. */
export interface StderrReporterOptions {
  /**
   * A kind of failure (its name, status and code) is written at most once per
   * this many milliseconds; the next line says how many were held back.
   * @default 30_000
   */
  readonly intervalMs?: number;
  /** Where lines go. @default process.stderr.write */
  readonly write?: (line: string) => void;
  /** The clock. @default Date.now */
  readonly now?: () => number;
}

/** Normalises anything thrown into an Error. */
export function toError(err: unknown): Error {
  if (err instanceof Error) return err;
  return new Error(typeof err === 'string' ? err : safeString(err));
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The identity of a kind of failure: class name, HTTP status and system code, never the message. */
function kindOf(err: Error): string {
  const status = (err as { status?: unknown }).status;
  const code = (err as { code?: unknown }).code;
  return `${err.name}|${typeof status === 'number' ? status : ''}|${typeof code === 'string' ? code : ''}`;
}

/**
 * Builds a reporter that writes one concise line per kind of failure to
 * stderr, rate-limited per kind, so a server that is down for an hour prints
 * a line every half minute rather than thousands. Messages of rxkube's errors
 * never hold a credential; a line is the error's name and the first line of
 * its message only, with every control character written as a visible
 * escape (see {@link printable}), so a message quoting a hostile server
 * cannot retitle, clear or write to the clipboard of the terminal.
 *
 * ## Example
 * ```ts
 * import { setErrorReporter } from 'rxkube';
 * import { createStderrReporter } from 'rxkube/core';
 *
 * // The default reporter, but at most one line per kind of failure every 5 s.
 * setErrorReporter(createStderrReporter({ intervalMs: 5_000 }));
 * ```
 *
 * @param opts rate limit, destination and clock.
 * @returns the reporter.
 */
export function createStderrReporter(opts: StderrReporterOptions = {}): ErrorSink {
  const intervalMs = opts.intervalMs ?? 30_000;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) throw new TypeError(`intervalMs must be a non-negative number of ms, got ${describeValue(opts.intervalMs)}`);
  const write = opts.write ?? ((line: string) => void process.stderr.write(line));
  const now = opts.now ?? Date.now;
  const throttle = new Throttle(intervalMs, now);
  return (err: Error) => {
    const passed = throttle.pass(kindOf(err));
    if (passed === undefined) return;
    const suffix = heldBack(passed);
    try {
      // A message may quote a server (a Status message, an object's field): escaped, so it cannot drive the terminal.
      write(`rxkube: ${printable(`${err.name}: ${err.message.split('\n', 1)[0] ?? ''}`)}${suffix}\n`);
    } catch {
      // A closed stderr must not turn a reported error into a crash.
    }
  };
}

// Where errors nobody else took go; created on first use so importing rxkube writes nothing.
let processReporter: ErrorSink | undefined;

/**
 * Redirects the process-wide default reporter: errors that reached no
 * `onError` option and no `errors$` subscriber go to `sink` instead of
 * stderr. `undefined` restores the stderr reporter.
 *
 * ## Example
 * ```ts
 * import { setErrorReporter } from 'rxkube';
 * declare const logger: { warn(fields: object, message: string): void };
 *
 * setErrorReporter((err) => logger.warn({ err }, 'rxkube'));
 * ```
 *
 * @param sink the new reporter, or undefined for the default.
 */
export function setErrorReporter(sink: ErrorSink | undefined): void {
  if (sink !== undefined && typeof sink !== 'function') throw new TypeError(`sink must be a function or undefined, got ${describeValue(sink)}`);
  processReporter = sink;
}

/**
 * The process-wide default: errors that reached no `onError` and no
 * subscriber of an informer's `errors$` are written to stderr, one line per
 * kind of failure every 30 s.
 *
 * ## Example
 * ```ts
 * import { reportError } from 'rxkube/core';
 *
 * reportError(new Error('something the user must see'));
 * ```
 *
 * @param err what went wrong.
 */
export function reportError(err: unknown): void {
  processReporter ??= createStderrReporter();
  try {
    processReporter(toError(err));
  } catch {
    // A failing reporter has nowhere left to report to; it must not break the stream that called it.
  }
}
