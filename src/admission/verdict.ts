import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import { printable } from '../errors/printable.js';
import type { AdmissionStatus } from './types.js';
import { deepFreeze } from '../store/deepFreeze.js';

declare const verdictBrand: unique symbol;

/**
 * What a handler decides: made by `admission.allow()` or `admission.deny()`
 * only, so that an object a mutating handler returns is never taken for one.
 */
export interface AdmissionVerdict {
  readonly [verdictBrand]: true;
  readonly allowed: boolean;
  /** The denial's status (absent when allowed). */
  readonly status?: AdmissionStatus;
  readonly warnings: readonly string[];
}

/** Options of `admission.allow`. */
export interface AllowOptions {
  /** Warnings kubectl prints to the user (at most 32 kept, each cut to 256 characters). @default [] */
  readonly warnings?: readonly string[];
}

/** Options of `admission.deny`. */
export interface DenyOptions {
  /** The field at fault (`spec.replicas`), sent as the status's cause. */
  readonly field?: string;
  /** The HTTP status the client sees, 400…599. @default 403 */
  readonly code?: number;
  /** The status reason (`Forbidden`, `Invalid`). @default 'Forbidden' for 403, 'Invalid' for 422, none otherwise */
  readonly reason?: string;
  /** Warnings kubectl prints to the user. @default [] */
  readonly warnings?: readonly string[];
}

// Verdicts made here; a plain object with `allowed` is not one.
const verdicts = new WeakSet<object>();

/** kube-apiserver cuts each warning to 256 characters and all of them to 4 KiB of headers; rxkube keeps within that. */
export const MAX_WARNING_LENGTH = 256;
export const MAX_WARNINGS = 32;
const MAX_WARNINGS_TOTAL = 4096;
/** A denial's message is cut here: it reaches a client's terminal through kube-apiserver. */
export const MAX_MESSAGE_LENGTH = 1024;

/** Cuts text to `max` characters, marking the cut. */
export function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Warnings as kube-apiserver can carry them: printable, each bounded, at most MAX_WARNINGS and 4 KiB. */
export function boundWarnings(warnings: readonly string[]): string[] {
  const out: string[] = [];
  let total = 0;
  for (const w of warnings) {
    if (out.length === MAX_WARNINGS) break;
    const one = bounded(printable(w), MAX_WARNING_LENGTH);
    if (one === '') continue;
    total += one.length;
    if (total > MAX_WARNINGS_TOTAL) break;
    out.push(one);
  }
  return out;
}

function warningsOption(where: string, value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((w) => typeof w === 'string')) {
    throw new TypeError(`${where}: option "warnings" must be an array of strings, got ${describeValue(value)}`);
  }
  return boundWarnings(value);
}

function make(v: Omit<AdmissionVerdict, typeof verdictBrand>): AdmissionVerdict {
  const verdict = deepFreeze({ ...v, warnings: [...v.warnings] }) as unknown as AdmissionVerdict;
  verdicts.add(verdict);
  return verdict;
}

let plainAllow: AdmissionVerdict | undefined;

/**
 * A verdict that admits the request.
 *
 * ## Example
 * ```ts
 * import { admission } from 'rxkube';
 *
 * const pods = admission.validating('v1/pods', ({ object }) =>
 *   object.spec?.hostNetwork === true ? admission.allow({ warnings: ['hostNetwork pods bypass network policies'] }) : admission.allow());
 * ```
 *
 * @param opts warnings for the user.
 * @returns the verdict.
 */
export function allow(opts?: AllowOptions): AdmissionVerdict {
  // The common one, with no options, is made once: a verdict is deep-frozen, so one can stand for all.
  if (opts === undefined) return (plainAllow ??= make({ allowed: true, warnings: [] }));
  const o = checkOptionNames('admission.allow', opts, optionNames<AllowOptions>({ warnings: true }));
  return make({ allowed: true, warnings: warningsOption('admission.allow', o.warnings) });
}

/**
 * A verdict that refuses the request with a message the client sees as
 * `admission webhook "<name>" denied the request: <message>`.
 *
 * ## Example
 * ```ts
 * import { admission } from 'rxkube';
 *
 * const deployments = admission.validating('apps/v1/deployments', ({ object }) =>
 *   (object.spec?.replicas ?? 1) > 10 ? admission.deny('at most 10 replicas', { field: 'spec.replicas', code: 422 }) : admission.allow());
 * ```
 *
 * @param message why, in a sentence.
 * @param opts the field at fault, the HTTP code and reason, warnings.
 * @returns the verdict.
 */
export function deny(message: string, opts: DenyOptions = {}): AdmissionVerdict {
  if (typeof message !== 'string' || message === '') throw new TypeError(`admission.deny: message must be a non-empty string, got ${describeValue(message)}`);
  const o = checkOptionNames('admission.deny', opts, optionNames<DenyOptions>({ field: true, code: true, reason: true, warnings: true }));
  const code = o.code ?? 403;
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 400 || code > 599) {
    throw new TypeError(`admission.deny: option "code" must be an integer HTTP status 400…599, got ${describeValue(o.code)}`);
  }
  for (const name of ['field', 'reason'] as const) {
    if (o[name] !== undefined && (typeof o[name] !== 'string' || o[name] === '')) throw new TypeError(`admission.deny: option "${name}" must be a non-empty string, got ${describeValue(o[name])}`);
  }
  const reason = (o.reason as string | undefined) ?? (code === 403 ? 'Forbidden' : code === 422 ? 'Invalid' : undefined);
  const text = bounded(printable(message), MAX_MESSAGE_LENGTH);
  const field = o.field as string | undefined;
  const status: AdmissionStatus = {
    status: 'Failure',
    code,
    message: text,
    ...(reason === undefined ? {} : { reason }),
    ...(field === undefined ? {} : { details: { causes: [{ field: bounded(printable(field), 256), message: text, reason: 'FieldValueInvalid' }] } }),
  };
  return make({ allowed: false, status, warnings: warningsOption('admission.deny', o.warnings) });
}

/** Whether a value is a verdict made by {@link allow} or {@link deny}. */
export function isVerdict(value: unknown): value is AdmissionVerdict {
  return typeof value === 'object' && value !== null && verdicts.has(value);
}
