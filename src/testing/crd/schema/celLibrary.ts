import { CelScalar, celEnv, celError, celMethod, isCelError, listType, parse, plan, type CelEnv, type CelResult, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { RE2JS } from '@bufbuild/re2';

// The CEL environment of x-kubernetes-validations rules: @bufbuild/cel's standard library and its
// strings extension, regular expressions with Go's RE2 syntax, and the cheap parts of Kubernetes'
// list and regex libraries (isSorted, sum, min, max, indexOf, lastIndexOf). The
// Kubernetes libraries it lacks (quantity, url, ip, cidr, semver, format.*, the regex find/findAll, sets, authz) are named so a rule
// that calls them fails with a message saying so.

const { BOOL, DYN, INT } = CelScalar;
const LIST = listType(DYN);

/** Functions of Kubernetes' CEL libraries the simulator does not provide. */
const UNSUPPORTED: ReadonlySet<string> = new Set([
  'quantity',
  'isQuantity',
  'url',
  'isURL',
  'ip',
  'isIP',
  'cidr',
  'isCIDR',
  'semver',
  'isSemver',
  'authorizer',
  'find',
  'findAll',
  'sets.contains',
  'sets.equivalent',
  'sets.intersects',
]);

function compare(a: CelValue, b: CelValue): number {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error('no such overload');
}

function items(list: Iterable<CelValue>): CelValue[] {
  return [...list];
}

function extreme(list: Iterable<CelValue>, sign: 1 | -1): CelValue {
  const all = items(list);
  if (all.length === 0) throw new Error('min/max called on an empty list');
  return all.reduce((best, v) => (compare(v, best) * sign > 0 ? v : best));
}

function sum(list: Iterable<CelValue>): CelValue {
  const all = items(list);
  if (all.every((v) => typeof v === 'bigint')) return all.reduce<bigint>((s, v) => s + (v as bigint), 0n);
  return all.reduce<number>((s, v) => s + Number(v), 0);
}

function indexOf(list: Iterable<CelValue>, x: CelValue, last: boolean): bigint {
  const all = items(list);
  const at = (v: CelValue): boolean => {
    try {
      return compare(v, x) === 0;
    } catch {
      return false;
    }
  };
  return BigInt(last ? all.findLastIndex(at) : all.findIndex(at));
}

const kubernetesLists = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    const all = items(this);
    return all.every((v, i) => i === 0 || compare(all[i - 1] as CelValue, v) <= 0);
  }),
  celMethod('sum', LIST, [], DYN, function () {
    return sum(this);
  }),
  celMethod('min', LIST, [], DYN, function () {
    return extreme(this, -1);
  }),
  celMethod('max', LIST, [], DYN, function () {
    return extreme(this, 1);
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (x) {
    return indexOf(this, x, false);
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (x) {
    return indexOf(this, x, true);
  }),
];

/** The one environment every rule is planned in. */
const env: CelEnv = celEnv({
  funcs: [...strings, ...kubernetesLists],
  re2: { compile: (pattern: string) => RE2JS.compile(pattern) },
});

/** A rule ready to run, or why it cannot. */
export type CompiledRule =
  | { readonly ok: true; readonly run: (bindings: Record<string, unknown>) => CelResult }
  | { readonly ok: false; readonly error: string };

const compiledRules = new Map<string, CompiledRule>();

/** The name of a Kubernetes library function the rule calls that the simulator lacks, if any. */
export function unsupportedFunction(rule: string): string | undefined {
  for (const m of rule.matchAll(/([A-Za-z_][A-Za-z0-9_.]*)\s*\(/g)) {
    const name = m[1] ?? '';
    const last = name.slice(name.lastIndexOf('.') + 1);
    if (UNSUPPORTED.has(name)) return name;
    if (name.startsWith('format.')) return name;
    if (UNSUPPORTED.has(last) && !name.startsWith('sets.')) return last;
  }
  return undefined;
}

/** Parses and plans `expr` once; a parse error is kept as text. */
export function compileRule(expr: string): CompiledRule {
  let rule = compiledRules.get(expr);
  if (rule === undefined) {
    try {
      const program = plan(env, parse(expr));
      rule = { ok: true, run: (bindings) => program(bindings as never) };
    } catch (e) {
      rule = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    if (compiledRules.size > 1000) compiledRules.clear();
    compiledRules.set(expr, rule);
  }
  return rule;
}

/** Runs a rule, turning a thrown error into a CEL error value. */
export function runRule(rule: CompiledRule & { ok: true }, bindings: Record<string, unknown>): CelResult {
  try {
    return rule.run(bindings);
  } catch (e) {
    return celError(e instanceof Error ? e.message : String(e));
  }
}

export { isCelError };
