import { isRecord, jsonType, type Node } from './schemaNodes.js';

// Whether a default validates against the structural schema it sits in, as kube-apiserver checks it
// when a CRD is created (CR-17): types, enums, bounds, lengths, patterns, required fields.

/** Why a value does not validate: where (a path below the node, `''` for the node itself) and what. */
export interface ValueProblem {
  readonly at: string;
  readonly message: string;
}

/**
 * `valueProblem` as one line (`replicas: below the minimum 0`), for the defaults check's messages; a default
 * must also hold no field its schema does not name, since the server refuses a default pruning would change.
 */
export function defaultProblem(node: Node, value: unknown): string | undefined {
  const problem = valueProblem(node, value) ?? unknownField(node, value, '');
  return problem === undefined ? undefined : problem.at === '' ? problem.message : `${problem.at}: ${problem.message}`;
}

/** The first field of `value` that pruning would drop (not named by the schema, nothing kept open), if any. */
function unknownField(node: Node, value: unknown, at: string): ValueProblem | undefined {
  if (node['x-kubernetes-preserve-unknown-fields'] === true) return undefined;
  if (Array.isArray(value)) {
    const items = node['items'];
    for (const [i, item] of value.entries()) {
      const problem = isRecord(items) ? unknownField(items, item, `${at}[${i}]`) : undefined;
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (!isRecord(value) || node['x-kubernetes-embedded-resource'] === true) return undefined;
  const props = isRecord(node['properties']) ? node['properties'] : {};
  const open = node['additionalProperties'];
  for (const [name, field] of Object.entries(value)) {
    const schema = isRecord(props[name]) ? props[name] : isRecord(open) ? open : undefined;
    if (schema === undefined && open !== true) return { at, message: `has the field ${JSON.stringify(name)} its schema does not name, which the API server would prune` };
    const problem = schema === undefined ? undefined : unknownField(schema, field, at === '' ? name : `${at}.${name}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * The first reason `value` does not validate against `node`, or undefined when it does.
 *
 * @param node A structural schema node.
 * @param value The value (a default, or a field of an object of a plain JSON Schema definition).
 * @returns Where and why, or undefined.
 */
export function valueProblem(node: Node, value: unknown, at = ''): ValueProblem | undefined {
  if (value === null) return node['nullable'] === true ? undefined : { at, message: `null is not allowed` };
  if (node['x-kubernetes-int-or-string'] === true) return typeof value === 'string' || Number.isInteger(value) ? undefined : { at, message: `expected an integer or a string` };
  const type = node['type'];
  const actual = jsonType(value);
  if (type !== undefined && type !== actual && !(type === 'number' && actual === 'integer')) return { at, message: `expected ${String(type)}, got ${actual}` };
  if (Array.isArray(node['enum']) && !node['enum'].some((e) => JSON.stringify(e) === JSON.stringify(value))) return { at, message: `not one of the enum's values` };
  if (typeof value === 'number') return numberProblem(node, value, at);
  if (typeof value === 'string') return stringProblem(node, value, at);
  if (Array.isArray(value)) {
    if (typeof node['minItems'] === 'number' && value.length < node['minItems']) return { at, message: `fewer than ${node['minItems']} items` };
    if (typeof node['maxItems'] === 'number' && value.length > node['maxItems']) return { at, message: `more than ${node['maxItems']} items` };
    const items = node['items'];
    for (const [i, item] of value.entries()) {
      const problem = isRecord(items) ? valueProblem(items, item, `${at}[${i}]`) : undefined;
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (isRecord(value)) return objectProblem(node, value, at);
  return undefined;
}

function numberProblem(node: Node, value: number, at: string): ValueProblem | undefined {
  const min = node['minimum'];
  const max = node['maximum'];
  if (typeof min === 'number' && (value < min || (node['exclusiveMinimum'] === true && value === min))) return { at, message: `below the minimum ${min}` };
  if (typeof max === 'number' && (value > max || (node['exclusiveMaximum'] === true && value === max))) return { at, message: `above the maximum ${max}` };
  const step = node['multipleOf'];
  if (typeof step === 'number' && step > 0 && !Number.isInteger(value / step)) return { at, message: `not a multiple of ${step}` };
  return undefined;
}

function stringProblem(node: Node, value: string, at: string): ValueProblem | undefined {
  const length = [...value].length;
  if (typeof node['minLength'] === 'number' && length < node['minLength']) return { at, message: `shorter than ${node['minLength']}` };
  if (typeof node['maxLength'] === 'number' && length > node['maxLength']) return { at, message: `longer than ${node['maxLength']}` };
  const pattern = node['pattern'];
  if (typeof pattern === 'string') {
    let re: RegExp | undefined;
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      re = undefined; // a pattern JavaScript cannot read (RE2 syntax) is left to the server
    }
    if (re !== undefined && !re.test(value)) return { at, message: `does not match the pattern` };
  }
  return undefined;
}

function objectProblem(node: Node, value: Node, at: string): ValueProblem | undefined {
  const props = isRecord(node['properties']) ? node['properties'] : {};
  for (const name of Array.isArray(node['required']) ? node['required'] : []) {
    if (value[name as string] === undefined && !(isRecord(props[name as string]) && (props[name as string] as Node)['default'] !== undefined)) return { at, message: `misses the required field ${String(name)}` };
  }
  for (const [name, field] of Object.entries(value)) {
    const schema = isRecord(props[name]) ? props[name] : isRecord(node['additionalProperties']) ? node['additionalProperties'] : undefined;
    const problem = schema === undefined ? undefined : valueProblem(schema, field, at === '' ? name : `${at}.${name}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
