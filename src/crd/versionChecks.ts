import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import { isRecord, type Node } from './schemaNodes.js';
import type { PrinterColumn, Subresources } from './options.js';

// The parts of a version besides its schema, checked as apiextensions validation checks them (CR-6, CR-7),
// and the paths they name found in the version's schema.

const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];
const SIMPLE_PATH = /^(\.[A-Za-z_][A-Za-z0-9_-]*)+$/;

/** The schema node a simple `.a.b.c` path leads to in `schema`, or undefined. */
export function schemaAt(schema: Node, path: string): Node | undefined {
  let node: Node | undefined = schema;
  for (const name of path.split('.').slice(1)) {
    const props: unknown = node?.['properties'];
    const next: unknown = isRecord(props) ? props[name] : undefined;
    node = isRecord(next) ? next : undefined;
  }
  return node;
}

/** `printerColumns` checked, as `additionalPrinterColumns`. */
export function checkPrinterColumns(where: string, value: unknown): readonly Node[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${where}: printerColumns must be an array, got ${describeValue(value)}`);
  const names = new Set<string>();
  return value.map((c: unknown, i) => {
    const at = `${where}: printerColumns[${i}]`;
    if (!isRecord(c)) throw new TypeError(`${at} must be an object, got ${describeValue(c)}`);
    checkOptionNames(at, c, optionNames<PrinterColumn>({ name: true, type: true, jsonPath: true, description: true, format: true, priority: true }));
    if (typeof c['name'] !== 'string' || c['name'] === '') throw new TypeError(`${at}.name must be a non-empty string, got ${describeValue(c['name'])}`);
    if (names.has(c['name'])) throw new TypeError(`${at}.name ${JSON.stringify(c['name'])} is the name of another column`);
    names.add(c['name']);
    if (!COLUMN_TYPES.includes(c['type'] as string)) throw new TypeError(`${at}.type must be one of ${COLUMN_TYPES.join(', ')}, got ${describeValue(c['type'])}`);
    if (typeof c['jsonPath'] !== 'string' || !c['jsonPath'].startsWith('.')) throw new TypeError(`${at}.jsonPath must be a JSONPath starting with '.', got ${describeValue(c['jsonPath'])}`);
    if (c['format'] !== undefined && !COLUMN_FORMATS.includes(c['format'] as string)) throw new TypeError(`${at}.format must be one of ${COLUMN_FORMATS.join(', ')}, got ${describeValue(c['format'])}`);
    if (c['description'] !== undefined && typeof c['description'] !== 'string') throw new TypeError(`${at}.description must be a string, got ${describeValue(c['description'])}`);
    const priority = c['priority'];
    if (priority !== undefined && (!Number.isSafeInteger(priority) || (priority as number) < 0 || (priority as number) > 2 ** 31 - 1)) throw new TypeError(`${at}.priority must be a non-negative int32, got ${describeValue(priority)}`);
    return Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));
  });
}

/** `subresources` checked: the scale paths must lead to fields of the schema of the right type. */
export function checkSubresources(where: string, value: unknown, schema: Node, hasStatus: boolean): Node | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) throw new TypeError(`${where}: subresources must be an object, got ${describeValue(value)}`);
  checkOptionNames(`${where}: subresources`, value, optionNames<Subresources>({ status: true, scale: true }));
  const out: Node = {};
  if (value['status'] !== undefined) {
    if (value['status'] !== true) throw new TypeError(`${where}: subresources.status must be true, got ${describeValue(value['status'])}`);
    if (!hasStatus) throw new TypeError(`${where}: subresources.status needs a status schema`);
    out['status'] = {};
  }
  const scale = value['scale'];
  if (scale !== undefined) {
    if (!isRecord(scale)) throw new TypeError(`${where}: subresources.scale must be an object, got ${describeValue(scale)}`);
    checkOptionNames(`${where}: subresources.scale`, scale, optionNames<NonNullable<Subresources['scale']>>({ specReplicasPath: true, statusReplicasPath: true, labelSelectorPath: true }));
    scalePath(where, schema, 'specReplicasPath', scale['specReplicasPath'], ['.spec.'], 'integer');
    scalePath(where, schema, 'statusReplicasPath', scale['statusReplicasPath'], ['.status.'], 'integer');
    if (scale['labelSelectorPath'] !== undefined) scalePath(where, schema, 'labelSelectorPath', scale['labelSelectorPath'], ['.spec.', '.status.'], 'string');
    out['scale'] = Object.fromEntries(Object.entries(scale).filter(([, v]) => v !== undefined));
  }
  return out;
}

function scalePath(where: string, schema: Node, option: string, value: unknown, under: readonly string[], type: string): void {
  const name = `${where}: subresources.scale.${option}`;
  if (typeof value !== 'string' || !SIMPLE_PATH.test(value) || !under.some((u) => value.startsWith(u))) {
    throw new TypeError(`${name} must be a path under ${under.join(' or ')} ('.spec.replicas'), got ${describeValue(value)}`);
  }
  const node = schemaAt(schema, value);
  if (node === undefined || node['type'] !== type) {
    throw new TypeError(`${name} ${JSON.stringify(value)} must lead to ${type === 'integer' ? 'an integer' : 'a string'} field of the schema, ${node === undefined ? 'but the schema has no such field' : `but it is of type ${String(node['type'] ?? 'any')}`}`);
  }
}

/** `selectableFields` checked: at most 8, each a string, integer or boolean field of the schema. */
export function checkSelectableFields(where: string, value: unknown, schema: Node): readonly Node[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 8) throw new TypeError(`${where}: selectableFields must be an array of at most 8, got ${describeValue(value)}`);
  return value.map((f: unknown, i) => {
    const path = isRecord(f) ? f['jsonPath'] : undefined;
    if (typeof path !== 'string' || !SIMPLE_PATH.test(path) || path.startsWith('.metadata')) {
      throw new TypeError(`${where}: selectableFields[${i}].jsonPath must be a path such as '.spec.color' outside metadata, got ${describeValue(path)}`);
    }
    const node = schemaAt(schema, path);
    if (node === undefined || !['string', 'integer', 'boolean'].includes(node['type'] as string)) {
      throw new TypeError(`${where}: selectableFields[${i}].jsonPath ${JSON.stringify(path)} must lead to a string, integer or boolean field of the schema`);
    }
    return { jsonPath: path };
  });
}
