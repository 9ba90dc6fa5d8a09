/**
 * What `rxkube crd generate` and `rxkube crd install` read from a module: it
 * is imported as Node imports it (a `.ts` module through Node's type
 * stripping), and every export that is a custom-resource definition gives
 * its CustomResourceDefinition (semantics CR-80, CR-81).
 */
import { existsSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CrdOptions } from '../crd/crdConversion.js';
import { printable } from '../errors/printable.js';
import { UsageError } from './usage.js';

/** One definition a module exports: the export's name and the CRD it gives. */
export interface CrdExport {
  /** The export's name (`Website`, or `default`). */
  readonly name: string;
  /** The `apiextensions.k8s.io/v1` CustomResourceDefinition, as the definition's `crd()` returns it. */
  readonly crd: Record<string, unknown>;
  /** Whether the definition has converters (a `conversion` option). */
  readonly converts: boolean;
}

/**
 * What `crd()` of a definition with converters is given: the webhook flags' options, or `'none'` for a CRD
 * with `conversion: { strategy: None }` (`rxkube simulator` without `--webhook-url`: nothing converts there).
 */
export type ConversionChoice = CrdOptions | 'none';

/** crd() of a definition with converters insists on a webhook: this one is never called, as its block is replaced by None. */
const UNCALLED_WEBHOOK: CrdOptions = { conversionWebhook: { url: 'https://conversion.invalid/convert' } };

/** The extensions a module may have. */
const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.js', '.mjs']);

/** True when Node runs this process with type stripping (Node ≥ 22.18 has it on by default). */
function stripsTypes(): boolean {
  const features = process.features as { readonly typescript?: string | false };
  return typeof features.typescript === 'string';
}

/** Why a `.ts` module cannot be imported, with what to do about it. */
function typeStrippingMissing(path: string): UsageError {
  return new UsageError(
    `${path}: a TypeScript module is imported through Node's type stripping, which needs Node ≥ 22.18 (this is Node ${process.versions.node}${stripsTypes() ? '' : ', with it off'}); upgrade Node, or compile the module and pass the .js file`,
  );
}

/** A compiled project's import extension beside the TypeScript file it was written from. */
const TS_SOURCE: Readonly<Record<string, string>> = { '.js': '.ts', '.mjs': '.mts' };

/**
 * When a module failed to load because it imports `./x.js` and only `./x.ts` is there (a project written
 * for tsc, whose relative imports name the compiled files; Node's type stripping maps no extension), the
 * two ways out; else ''.
 */
function compiledImportHint(err: unknown): string {
  const e = err as { url?: unknown; message?: unknown } | null;
  let missing: string | undefined;
  if (typeof e?.url === 'string' && e.url.startsWith('file:')) missing = fileURLToPath(e.url);
  else if (typeof e?.message === 'string') missing = /^Cannot find module '([^']+)'/.exec(e.message)?.[1];
  const ext = missing === undefined ? '' : extname(missing).toLowerCase();
  const source = TS_SOURCE[ext];
  if (missing === undefined || source === undefined) return '';
  const ts = `${missing.slice(0, -ext.length)}${source}`;
  if (!existsSync(ts)) return '';
  const [wanted, there] = [basename(missing), basename(ts)];
  return (
    ` (${printable(there)} is there beside it: the module is written for tsc, whose relative imports name the compiled ${ext} files, and Node's type stripping maps no ${ext} import to a ${source} file.` +
    ` Either import the ${source} files ('./${printable(there)}' for './${printable(wanted)}') and set "rewriteRelativeImportExtensions": true in tsconfig so that tsc still writes ${ext} imports, or compile the project and pass the compiled ${ext} module)`
  );
}

/**
 * Anything shaped like a definition: a `crd()` method beside its kind. Not `isCustomResource`,
 * which knows only the definitions of this copy of rxkube: the module may resolve 'rxkube' to another.
 */
export function isDefinition(value: unknown): value is { crd(options?: CrdOptions): unknown; hasConversion?: unknown } {
  const v = value as { crd?: unknown; kind?: unknown } | null | undefined;
  return typeof v?.crd === 'function' && typeof v.kind === 'string';
}

/** The CRD a definition gives, checked to be one: with the webhook options when it has converters. */
function crdOf(path: string, name: string, definition: { crd(options?: CrdOptions): unknown; hasConversion?: unknown }, webhook: ConversionChoice | undefined): Record<string, unknown> {
  const converts = definition.hasConversion === true;
  let crd: unknown;
  try {
    crd = converts && webhook !== undefined ? definition.crd(webhook === 'none' ? UNCALLED_WEBHOOK : webhook) : definition.crd();
  } catch (err) {
    const hint = converts && webhook === undefined ? ' (its CRD needs the conversion webhook: pass --webhook-service <namespace>/<name>[:port] or --webhook-url <url>)' : '';
    throw new UsageError(`${path}: export ${name}: crd() threw ${printable(err instanceof Error ? `${err.name}: ${err.message}` : String(err), { newlines: true })}${hint}`);
  }
  const o = crd as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } } | null;
  if (typeof o !== 'object' || o === null || o.apiVersion !== 'apiextensions.k8s.io/v1' || o.kind !== 'CustomResourceDefinition' || typeof o.metadata?.name !== 'string') {
    throw new UsageError(`${path}: export ${name}: crd() did not return an apiextensions.k8s.io/v1 CustomResourceDefinition with a metadata.name`);
  }
  const made = crd as Record<string, unknown>;
  if (!converts || webhook !== 'none') return made;
  return { ...made, spec: { ...(made['spec'] as Record<string, unknown>), conversion: { strategy: 'None' } } };
}

/**
 * Imports a module as Node imports it (a `.ts` one through type stripping),
 * explaining in one UsageError what to do when it cannot.
 *
 * @param path the module: `.ts`, `.mts`, `.js` or `.mjs`, relative to the working directory.
 * @returns its namespace.
 * @throws {UsageError} for a missing file, an unsupported extension, a `.ts` module on a Node without type stripping, or a module that fails to load.
 */
export async function importModule(path: string): Promise<Record<string, unknown>> {
  const shown = printable(path);
  const ext = extname(path).toLowerCase();
  if (!MODULE_EXTENSIONS.has(ext)) throw new UsageError(`${shown}: expected a module ending in .ts, .mts, .js or .mjs`);
  const file = resolve(path);
  if (!existsSync(file)) throw new UsageError(`${shown}: no such file`);
  const typescript = ext === '.ts' || ext === '.mts';
  if (typescript && !stripsTypes()) throw typeStrippingMissing(shown);
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (typescript && code === 'ERR_UNKNOWN_FILE_EXTENSION') throw typeStrippingMissing(shown);
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const hint =
      code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'
        ? ' (type stripping erases types only: enums, namespaces and parameter properties need a compiled .js module)'
        : code === 'ERR_MODULE_NOT_FOUND'
          ? compiledImportHint(err)
          : '';
    throw new UsageError(`${shown}: the module did not load: ${printable(why, { newlines: true })}${hint}`);
  }
}

/**
 * Imports a module and returns the CustomResourceDefinition of every
 * custom-resource definition it exports, by export name (in the module
 * namespace's order, which is alphabetical). A definition exported under two
 * names is given once, under its first name.
 *
 * @param path the module: `.ts`, `.mts`, `.js` or `.mjs`, relative to the working directory.
 * @param webhook what `crd()` of a definition with converters is given (`--webhook-service`, `--webhook-url`), or `'none'`.
 * @param opts `requireConverting: false` allows a webhook that no definition of this module takes (the caller checks across modules).
 * @returns the definitions; never empty.
 * @throws {UsageError} for a missing file, an unsupported extension, a `.ts` module on a Node without type stripping,
 *   a module that fails to load, exports no definition, or exports two of the same CRD name.
 */
export async function loadCrdModule(path: string, webhook?: ConversionChoice, opts: { readonly requireConverting?: boolean } = {}): Promise<CrdExport[]> {
  const shown = printable(path);
  const namespace = await importModule(path);
  const found: CrdExport[] = [];
  const seen = new Set<unknown>();
  const byCrdName = new Map<string, string>();
  let converting = 0;
  for (const [name, value] of Object.entries(namespace)) {
    if (!isDefinition(value) || seen.has(value)) continue;
    seen.add(value);
    const crd = crdOf(shown, name, value, webhook);
    if (value.hasConversion === true) converting += 1;
    const crdName = (crd['metadata'] as { name: string }).name;
    const other = byCrdName.get(crdName);
    if (other !== undefined) throw new UsageError(`${shown}: exports ${other} and ${name} both define ${printable(crdName)}; export each custom resource once`);
    byCrdName.set(crdName, name);
    found.push({ name, crd, converts: value.hasConversion === true });
  }
  if (found.length === 0) {
    const names = Object.keys(namespace);
    throw new UsageError(
      `${shown} exports no custom-resource definition (a value made by customResource(), with a crd() method); its exports: ${names.length === 0 ? 'none' : names.map((n) => printable(n)).join(', ')}`,
    );
  }
  if (webhook !== undefined && webhook !== 'none' && converting === 0 && opts.requireConverting !== false) {
    throw new UsageError(`${shown}: --webhook-service and --webhook-url are for definitions with converters (a conversion option), and none of ${found.map((f) => f.name).join(', ')} has one`);
  }
  return found;
}
