import { fieldCause, forbidden, invalid, required, duplicate, type FieldCause } from './causes.js';
import { formattedString } from './celFormats.js';
import { compileRule, isCelError, runRule, unsupportedFunction } from './celLibrary.js';
import { child, index, key } from './fieldPath.js';
import { isGoInt } from './goText.js';
import { childOf, isRecord, type Node, type ValidationRuleInput } from './node.js';
import { jsonEqual } from './values.js';

// x-kubernetes-validations: every rule of a node runs with `self` bound to the node's value, typed
// by the schema (integer → int, number → double, objects and maps → maps), and `oldSelf` to the
// correlated old value on update. A rule that reads oldSelf (a transition rule) runs only when an
// old value exists; a rule that does not is ratcheted: its failure is dropped when the value did not
// change, as the server does with CRDValidationRatcheting.

const USES_OLD_SELF = /\boldSelf\b/;

/** A decoded JSON value as CEL sees it, typed by its schema (a formatted string as its timestamp, duration or bytes). */
export function toCel(value: unknown, node: Node | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    const asInt = node?.type === 'integer' || ((node === undefined || node.type === '') && isGoInt(value));
    return asInt && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => toCel(v, node?.items));
  if (isRecord(value)) return new Map(Object.entries(value).map(([k, v]) => [k, toCel(v, childOf(node, k))]));
  if (typeof value === 'string' && node !== undefined && node.format !== '') return formattedString(value, node.format);
  return value;
}

/** The text naming a rule in a message: its message if set, else the rule. */
function ruleText(rule: ValidationRuleInput): string {
  return (rule.message !== undefined && rule.message.trim() !== '' ? rule.message : rule.rule).trim();
}

function defaultMessage(rule: ValidationRuleInput): string {
  return rule.message !== undefined && rule.message.trim() !== '' ? rule.message.trim() : `failed rule: ${rule.rule.trim()}`;
}

/** The cause of a failed rule, by its `reason`. */
function failure(field: string, type: string, detail: string, reason: ValidationRuleInput['reason']): FieldCause {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbidden(field, detail);
    case 'FieldValueRequired':
      return required(field, detail);
    case 'FieldValueDuplicate':
      return duplicate(field, type);
    default:
      return invalid(field, type, detail);
  }
}

/** The message a messageExpression gives, or undefined when it fails (the rule's message is used then). */
function evaluatedMessage(expr: string, bindings: Record<string, unknown>): string | undefined {
  const compiled = compileRule(expr);
  if (!compiled.ok) return undefined;
  const out = runRule(compiled, bindings);
  if (typeof out !== 'string') return undefined;
  const trimmed = out.trim();
  return trimmed === '' || trimmed.includes('\n') || trimmed.length > 5120 ? undefined : trimmed;
}

/** Go's CEL wording for the errors both evaluators raise. */
function runtimeMessage(message: string): string {
  return message.replace(/^field not found: /, 'no such key: ');
}

interface Site {
  readonly path: string;
  readonly value: unknown;
  readonly old: unknown;
  readonly hasOld: boolean;
  readonly node: Node;
  /** Whether an unchanged value's failure is dropped (updates of objects; not a CRD's defaults). */
  readonly ratchet: boolean;
}

function runOne(site: Site, rule: ValidationRuleInput): FieldCause | undefined {
  const { path, node } = site;
  const usesOld = USES_OLD_SELF.test(rule.rule);
  if (usesOld && !site.hasOld) return undefined;
  const value = node.type;
  const unsupported = unsupportedFunction(rule.rule);
  if (unsupported !== undefined) {
    return invalid(path, value, `rule uses ${unsupported}(), which the simulator's CEL library does not provide: ${rule.rule.trim()}`);
  }
  if (rule.optionalOldSelf === true) {
    return invalid(path, value, `rule sets optionalOldSelf, which the simulator does not support: ${rule.rule.trim()}`);
  }
  const compiled = compileRule(rule.rule);
  if (!compiled.ok) return invalid(path, value, `rule compile error: ${compiled.error}`);
  const bindings: Record<string, unknown> = { self: toCel(site.value, node) };
  if (site.hasOld) bindings['oldSelf'] = toCel(site.old, node);
  const result = runRule(compiled, bindings);
  if (isCelError(result)) {
    const message = runtimeMessage(result.message);
    if (message.startsWith('unbound function')) {
      return invalid(path, value, `rule uses a function the simulator's CEL library does not provide (${message}): ${rule.rule.trim()}`);
    }
    return invalid(path, value, `${message} evaluating rule: ${ruleText(rule)}`);
  }
  if (result === true) return undefined;
  if (site.ratchet && !usesOld && site.hasOld && jsonEqual(site.value, site.old)) return undefined;
  const field = rule.fieldPath !== undefined && rule.fieldPath !== '' ? child(path, rule.fieldPath.replace(/^\./, '')) : path;
  const fromExpression = rule.messageExpression === undefined ? undefined : evaluatedMessage(rule.messageExpression, bindings);
  return failure(field, value, fromExpression ?? defaultMessage(rule), rule.reason);
}

/** The old list item correlated with `item`: only map lists correlate, by their keys. */
function oldItem(node: Node, item: unknown, old: unknown): { readonly found: boolean; readonly value: unknown } {
  if (node.listType !== 'map' || !Array.isArray(old) || !isRecord(item)) return { found: false, value: undefined };
  const match = old.find((o) => isRecord(o) && node.listMapKeys.every((k) => jsonEqual(o[k], item[k])));
  return { found: match !== undefined, value: match };
}

function walk(site: Site, out: FieldCause[]): void {
  const { path, value, node } = site;
  if (value === null || value === undefined) return;
  for (const rule of node.validations) {
    const cause = runOne(site, rule);
    if (cause !== undefined) out.push(cause);
  }
  if (Array.isArray(value) && node.items !== undefined) {
    const items = node.items;
    value.forEach((item, i) => {
      const prev = oldItem(node, item, site.old);
      walk({ path: index(path, i), value: item, old: prev.value, hasOld: prev.found, node: items, ratchet: site.ratchet }, out);
    });
    return;
  }
  if (!isRecord(value)) return;
  const old = isRecord(site.old) ? site.old : undefined;
  for (const [k, v] of Object.entries(value)) {
    const prop = node.properties?.get(k);
    const sub = prop ?? (typeof node.additional === 'object' ? node.additional : undefined);
    if (sub === undefined) continue;
    const hasOld = old !== undefined && k in old && old[k] !== null;
    walk({ path: prop !== undefined ? child(path, k) : key(path, k), value: v, old: old?.[k], hasOld, node: sub, ratchet: site.ratchet }, out);
  }
}

/** The causes of every failing x-kubernetes-validations rule in `obj` (`old` is the stored object on update). */
export function checkRules(obj: Record<string, unknown>, old: Record<string, unknown> | undefined, root: Node): FieldCause[] {
  const out: FieldCause[] = [];
  walk({ path: '', value: obj, old, hasOld: old !== undefined, node: root, ratchet: true }, out);
  return out;
}

/**
 * The causes of the rules of a CRD's default value at `path`, as the server checks a default: as
 * an update from the default to itself (transition rules included, nothing ratcheted), then, when
 * that passes, as a create.
 */
export function checkDefaultRules(path: string, value: unknown, node: Node): FieldCause[] {
  const out: FieldCause[] = [];
  walk({ path, value, old: value, hasOld: true, node, ratchet: false }, out);
  if (out.length === 0) walk({ path, value, old: undefined, hasOld: false, node, ratchet: false }, out);
  return out;
}

const withRules = new WeakMap<Node, boolean>();

/** Whether any node of the schema has x-kubernetes-validations (the server builds no CEL validator otherwise). */
export function hasRules(node: Node): boolean {
  let has = withRules.get(node);
  if (has === undefined) {
    const children = [...(node.properties?.values() ?? []), node.items, typeof node.additional === 'object' ? node.additional : undefined];
    has = node.validations.length > 0 || children.some((c) => c !== undefined && hasRules(c));
    withRules.set(node, has);
  }
  return has;
}

/** The cause the server adds instead of running the rules when the object already has a blocking error. */
export function rulesSkipped(): FieldCause {
  return fieldCause(
    'FieldValueInvalid',
    '',
    null,
    'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  );
}
