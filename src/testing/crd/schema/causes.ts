import { goJson, goNumber, goQuote } from './goText.js';

/**
 * One entry of a 422 Status's `details.causes`, as kube-apiserver writes it for a custom resource:
 * `reason` is the field error's type (`FieldValueInvalid`, `FieldValueRequired`, …), `message` its
 * body (`Invalid value: 60: spec.replicas in body should be less than or equal to 50`), `field` its
 * path (`spec.replicas`, `spec.ports[0]`, `<nil>` for the object itself).
 */
export interface FieldCause {
  readonly reason: FieldCauseReason;
  readonly message: string;
  readonly field: string;
}

/** The field error types apimachinery's `field.ErrorType` names. */
export type FieldCauseReason =
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

/** A bad value apimachinery leaves out of the message (`Too long` never shows the value). */
export const OMIT: unique symbol = Symbol('omit');

/** The field path of the object itself: a nil `*field.Path` prints as `<nil>`. */
export const ROOT_FIELD = '<nil>';

const TITLES: Readonly<Record<FieldCauseReason, string>> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

const WITHOUT_VALUE: ReadonlySet<FieldCauseReason> = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'InternalError',
]);

/** How `field.Error.ErrorBody` prints a bad value: strings quoted, numbers and booleans with `%v`, the rest as JSON. */
function badValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goJson(value);
}

/** A cause with apimachinery's `ErrorBody` text: the type's title, the bad value where it shows, the detail. */
export function fieldCause(reason: FieldCauseReason, field: string, value: unknown, detail: string): FieldCause {
  let message = TITLES[reason];
  if (!WITHOUT_VALUE.has(reason) && value !== OMIT) message += `: ${badValue(value)}`;
  if (detail !== '') message += `: ${detail}`;
  return { reason, message, field: field === '' ? ROOT_FIELD : field };
}

/** `field.Invalid`. */
export const invalid = (field: string, value: unknown, detail: string): FieldCause =>
  fieldCause('FieldValueInvalid', field, value, detail);

/** `field.TypeInvalid`. */
export const typeInvalid = (field: string, value: unknown, detail: string): FieldCause =>
  fieldCause('FieldValueTypeInvalid', field, value, detail);

/** `field.Required`. */
export const required = (field: string, detail = ''): FieldCause => fieldCause('FieldValueRequired', field, OMIT, detail);

/** `field.Forbidden`. */
export const forbidden = (field: string, detail: string): FieldCause => fieldCause('FieldValueForbidden', field, OMIT, detail);

/** `field.Duplicate`. */
export const duplicate = (field: string, value: unknown): FieldCause => fieldCause('FieldValueDuplicate', field, value, '');

/** `field.NotSupported`: each allowed value quoted, non-strings as their JSON. */
export function notSupported(field: string, value: unknown, allowed: readonly unknown[]): FieldCause {
  const quoted = allowed.map((v) => goQuote(typeof v === 'string' ? v : goJson(v)));
  return fieldCause('FieldValueNotSupported', field, value, quoted.length === 0 ? '' : `supported values: ${quoted.join(', ')}`);
}

/** `field.TooLong`: the value is never shown, and the limit is counted in "bytes" whatever was counted. */
export function tooLong(field: string, max: number): FieldCause {
  const detail = max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return fieldCause('FieldValueTooLong', field, OMIT, detail);
}

/** `field.TooMany`. */
export function tooMany(field: string, actual: number, max: number): FieldCause {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items';
  return fieldCause('FieldValueTooMany', field, actual >= 0 ? actual : OMIT, detail);
}
