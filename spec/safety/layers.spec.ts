import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md draws these layers; this spec keeps the code to the drawing. A folder may import only
// folders of a lower rank (never a peer, never one above), and the files of one folder form no import circle.
const RANKS: Readonly<Record<string, number>> = {
  'nodeVersion.ts': 0,
  options: 0,
  store: 1,
  errors: 2,
  transport: 3,
  sources: 4,
  reflector: 5,
  operators: 6,
  informer: 7,
  workqueue: 8,
  client: 8,
  events: 9,
  leaderelection: 9,
  controller: 10,
  multicluster: 11,
  sharding: 11,
  crd: 12,
  admission: 13,
  manager: 14,
  metrics: 15,
  cli: 16,
  'index.ts': 17,
  'core.ts': 17,
};
// The simulator proves the client right only if it shares none of the code under test: it may reuse the option
// checks, the store's selector matching and the error printing, nothing else; only the command line starts it.
const TESTING_MAY_IMPORT = new Set(['nodeVersion.ts', 'options', 'store', 'errors']);

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import (static, re-export, dynamic, type-only) of a file, resolved to the file it names. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')));
  }
  return out;
}

const top = (file: string): string => relative(SRC, file).split('/')[0] as string;
const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

/** Whether a file of folder `from` may import one of folder `to`. */
function allowed(from: string, to: string): boolean {
  if (from === 'testing') return TESTING_MAY_IMPORT.has(to);
  if (to === 'testing') return from === 'cli';
  return (RANKS[to] as number) < (RANKS[from] as number);
}

describe('the layers of src/ (docs/architecture.md)', () => {
  it('every top-level folder and file has a rank', () => {
    const unranked = [...new Set(files.map(top))].filter((t) => t !== 'testing' && RANKS[t] === undefined);
    expect(unranked).toEqual([]);
  });

  it('imports run down the layers only', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const target of imports) {
        if (top(target) !== top(file) && !allowed(top(file), top(target))) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('no import circle inside a folder', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) {
        if (top(next) !== top(file) || !graph.has(next)) continue;
        if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(SRC, f)).join(' -> '));
        else if (state.get(next) === undefined) visit(next, [...path, next]);
      }
      state.set(file, 'done');
    };
    for (const file of files) if (state.get(file) === undefined) visit(file, [file]);
    expect(circles).toEqual([]);
  });
});
