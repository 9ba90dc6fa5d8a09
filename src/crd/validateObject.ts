import type { StandardSchemaV1 } from '@standard-schema/spec';
import { printable } from '../errors/printable.js';
import { valueProblem } from './defaults.js';
import type { ParsedDefinition, ParsedVersion } from './definition.js';
import { isRecord } from './schemaNodes.js';

// A definition's validate(): the object's type fields and metadata, then spec and status by the schema
// library's own validator, with issues at kube-apiserver's field paths (CR-20…CR-23).

/** One reason an object does not validate: the field (`spec.replicas`, `spec.ports[0].name`) and what is wrong. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/** What `validate` answers: the object as the schemas read it (defaults and transforms applied), or the issues (Standard Schema's shape). */
export type ValidationResult<T> = { readonly value: T; readonly issues?: undefined } | { readonly issues: readonly ValidationIssue[] };

/** Bound on one issue's message: a library's message may quote the value it refused. */
const MAX_MESSAGE = 1024;
const MAX_ISSUES = 100;

/** Validates `obj` as an object of version `version` of `def`. */
export function validateObject(def: ParsedDefinition, version: ParsedVersion, obj: unknown): ValidationResult<unknown> {
  if (!isRecord(obj)) return { issues: Object.freeze([issue('', `expected an object, got ${obj === null ? 'null' : Array.isArray(obj) ? 'an array' : typeof obj}`)]) };
  const issues: ValidationIssue[] = [];
  const apiVersion = `${def.group}/${version.name}`;
  if (obj['apiVersion'] !== apiVersion) issues.push(issue('apiVersion', `expected ${JSON.stringify(apiVersion)}`));
  if (obj['kind'] !== def.kind) issues.push(issue('kind', `expected ${JSON.stringify(def.kind)}`));
  checkMetadata(obj['metadata'], issues);
  const out: Record<string, unknown> = { ...obj };
  if (obj['spec'] === undefined) issues.push(issue('spec', 'Required value'));
  else out['spec'] = run(def, 'spec', version.spec, obj['spec'], issues);
  if (obj['status'] !== undefined) {
    if (version.status === undefined) issues.push(issue('status', `${def.kind} ${version.name} declares no status`));
    else out['status'] = run(def, 'status', version.status, obj['status'], issues);
  }
  if (issues.length > 0) return { issues: Object.freeze(issues.slice(0, MAX_ISSUES)) };
  return { value: out };
}

function checkMetadata(metadata: unknown, issues: ValidationIssue[]): void {
  if (metadata === undefined) return;
  if (!isRecord(metadata)) {
    issues.push(issue('metadata', 'expected an object'));
    return;
  }
  for (const field of ['name', 'generateName', 'namespace', 'uid', 'resourceVersion']) {
    if (metadata[field] !== undefined && typeof metadata[field] !== 'string') issues.push(issue(`metadata.${field}`, 'expected a string'));
  }
  for (const field of ['labels', 'annotations']) {
    const map = metadata[field];
    if (map === undefined) continue;
    if (!isRecord(map)) issues.push(issue(`metadata.${field}`, 'expected a map of strings'));
    else for (const [k, v] of Object.entries(map)) if (typeof v !== 'string') issues.push(issue(`metadata.${field}[${k}]`, 'expected a string'));
  }
}

function run(def: ParsedDefinition, part: 'spec' | 'status', schema: NonNullable<ParsedVersion['status']>, value: unknown, issues: ValidationIssue[]): unknown {
  if (schema.validate === undefined) {
    const problem = valueProblem(schema.structural, value);
    if (problem !== undefined) issues.push(issue(problem.at === '' ? part : `${part}.${problem.at}`, problem.message));
    return value;
  }
  const result = schema.validate(value);
  if (typeof (result as { then?: unknown }).then === 'function') {
    void (result as Promise<unknown>).catch(() => undefined);
    throw new TypeError(`${def.kind}.validate: the ${part} schema validates asynchronously (an async refinement). validate is synchronous, as kube-apiserver's validation is: write the check as a CEL rule (x-kubernetes-validations), or run it in the reconciler`);
  }
  const sync = result as StandardSchemaV1.Result<unknown>;
  if (sync.issues !== undefined) {
    for (const i of sync.issues) issues.push(issue(fieldPath(part, i.path), i.message));
    return value;
  }
  return sync.value;
}

/** `spec.ports[0].name`: property names after dots, array indices in brackets, as kube-apiserver writes field paths. */
function fieldPath(part: string, path: StandardSchemaV1.Issue['path']): string {
  let out = part;
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  return out;
}

function issue(path: string, message: string): ValidationIssue {
  const bounded = (text: string): string => printable(text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);
  return Object.freeze({ path: bounded(path), message: bounded(message) });
}
