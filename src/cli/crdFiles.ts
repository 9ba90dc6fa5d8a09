/**
 * `rxkube simulator --crd <file>`: the CustomResourceDefinitions of YAML or
 * JSON files (several documents each) and of TypeScript or JavaScript
 * modules (their exported definitions).
 */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadAll } from 'js-yaml';
import { printable } from '../errors/printable.js';
import { crdsOfModule } from './crdModules.js';
import { UsageError } from './usage.js';

const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.js', '.mjs']);
const DOCUMENT_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

const shown = (path: string): string => printable(JSON.stringify(path));

/** The documents of a YAML or JSON file that are CRDs; anything else in it is a usage error naming the document. */
async function crdsOfDocuments(path: string): Promise<object[]> {
  let docs: unknown[];
  try {
    const text = await readFile(path, 'utf8');
    docs = extname(path) === '.json' ? [JSON.parse(text) as unknown] : loadAll(text);
  } catch (err) {
    throw new UsageError(`--crd ${shown(path)}: cannot read it: ${printable(err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err)).slice(0, 300)}`);
  }
  const crds: object[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc === null || doc === undefined) continue;
    const items = isRecord(doc) && doc['kind'] === 'List' && Array.isArray(doc['items']) ? (doc['items'] as unknown[]) : [doc];
    for (const item of items) {
      if (!isRecord(item) || item['kind'] !== 'CustomResourceDefinition') {
        const kind = isRecord(item) ? printable(String(item['kind'])).slice(0, 100) : typeof item;
        throw new UsageError(`--crd ${shown(path)}: document ${i + 1} is a ${kind}, not a CustomResourceDefinition`);
      }
      crds.push(item);
    }
  }
  return crds;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The CRDs a module exports; a `.ts` module needs Node's type stripping (Node 22.18 or later). */
async function crdsOfModuleFile(path: string): Promise<object[]> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err);
    const hint = path.endsWith('ts') ? ' (TypeScript modules need Node 22.18 or later, which strips types)' : '';
    throw new UsageError(`--crd ${shown(path)}: cannot load the module${hint}: ${printable(why).slice(0, 300)}`);
  }
  const crds = crdsOfModule(mod);
  if (crds.length === 0) throw new UsageError(`--crd ${shown(path)}: the module exports no custom-resource definition (an export with a crd() method)`);
  return crds;
}

/**
 * Loads the CRDs of every `--crd` path, in order.
 *
 * @param paths the files given.
 * @returns the CRD objects.
 * @throws UsageError for a file that cannot be read, holds something else, or has an unknown extension.
 */
export async function loadCrds(paths: readonly string[]): Promise<object[]> {
  const all: object[] = [];
  for (const path of paths) {
    const ext = extname(path).toLowerCase();
    if (MODULE_EXTENSIONS.has(ext)) all.push(...(await crdsOfModuleFile(path)));
    else if (DOCUMENT_EXTENSIONS.has(ext)) all.push(...(await crdsOfDocuments(path)));
    else throw new UsageError(`--crd ${shown(path)}: expected a .yaml, .yml or .json file, or a .ts, .mts, .js or .mjs module`);
  }
  return all;
}
