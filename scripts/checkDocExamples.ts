// Checks that every `## Example` in a doc comment under src/, and every ```ts block of README.md,
// compiles against the package's entries ('rxkube', 'rxkube/core', 'rxkube/testing',
// 'rxkube/metrics', 'rxkube/zod', 'rxkube/valibot', mapped to the sources): each block is written as a module of its own under
// build/doc-examples/ and the lot is typechecked with the project's compiler. An example is a
// program a user copies, so it carries its imports; what it assumes from around it (a KubeConfig,
// an informer) it states with `declare const` or builds. A README block that is deliberately not a
// whole module (a few lines of an API shown in passing) says so in its info string,
// ```ts fragment, and is left out; every other ```ts or ```typescript block is checked, so a
// section added later is covered without a change here. Run by spec/docs/examples.spec.ts; by
// hand: `node_modules/.bin/node scripts/checkDocExamples.ts`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One ```ts block found under `## Example` in a doc comment. */
export interface DocExample {
  /** Source file, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the block's first code line in that file. */
  readonly line: number;
  readonly code: string;
}

/** A compiler diagnostic, placed in the source file the example came from. */
export interface DocExampleError {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'build', 'doc-examples');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every ```ts block that follows a `## Example` heading inside a `/** … *\/` comment of `text`. */
export function examplesIn(file: string, text: string): DocExample[] {
  const lines = text.split('\n');
  const found: DocExample[] = [];
  let inComment = false;
  let underExample = false;
  let block: { line: number; code: string[] } | undefined;
  lines.forEach((raw, i) => {
    const trimmed = raw.trim();
    if (!inComment) {
      if (trimmed.startsWith('/**')) inComment = true;
      else return;
    }
    const body = raw.replace(/^\s*(\/\*\*|\*\/|\*(?!\/))? ?/, '');
    if (block !== undefined) {
      if (body.trim() === '```') {
        found.push({ file, line: block.line, code: block.code.join('\n') });
        block = undefined;
      } else block.code.push(body);
    } else if (/^#+\s/.test(body.trim())) {
      underExample = /^##\s+Example\b/.test(body.trim());
    } else if (underExample && /^```(ts|typescript)\s*$/.test(body.trim())) {
      block = { line: i + 2, code: [] };
    }
    if (trimmed.endsWith('*/')) {
      inComment = false;
      underExample = false;
      block = undefined;
    }
  });
  return found;
}

/**
 * Every ```ts (or ```typescript) block of a Markdown text, fences indented or not (a block inside a
 * list item), except those whose info string says `fragment`.
 */
export function markdownExamples(file: string, text: string): DocExample[] {
  const found: DocExample[] = [];
  let block: { line: number; indent: number; code: string[]; checked: boolean } | undefined;
  text.split('\n').forEach((raw, i) => {
    const fence = /^(\s*)(`{3,}|~{3,})\s*(.*)$/.exec(raw);
    if (block !== undefined) {
      if (fence !== null && fence[3] === '') {
        if (block.checked) found.push({ file, line: block.line, code: block.code.join('\n') });
        block = undefined;
      } else block.code.push(raw.slice(Math.min(block.indent, raw.length - raw.trimStart().length)));
      return;
    }
    if (fence === null) return;
    const words = (fence[3] ?? '').trim().split(/\s+/);
    block = { line: i + 2, indent: (fence[1] ?? '').length, code: [], checked: /^(ts|typescript)$/.test(words[0] ?? '') && !words.includes('fragment') };
  });
  return found;
}

/** Every doc-comment example under src/, and every checked block of README.md. */
export function docExamples(): DocExample[] {
  const inSources = sourceFiles(join(root, 'src'))
    .sort()
    .flatMap((path) => examplesIn(relative(root, path), readFileSync(path, 'utf8')));
  return [...inSources, ...markdownExamples('README.md', readFileSync(join(root, 'README.md'), 'utf8'))];
}

/** Writes each example as a module and typechecks them; returns the errors, placed in the sources. */
export function checkDocExamples(examples: readonly DocExample[] = docExamples()): DocExampleError[] {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const origin = new Map<string, DocExample>();
  examples.forEach((ex, i) => {
    const name = `${String(i).padStart(3, '0')}_${ex.file.replace(/[\\/]/g, '_').replace(/\.(ts|md)$/, '')}.ts`;
    origin.set(name, ex);
    // `export {}` makes a block without imports a module too, so top-level await and its names stay its own.
    writeFileSync(join(outDir, name), `${ex.code}\nexport {};\n`);
  });
  const src = (p: string): string[] => [relative(outDir, join(root, 'src', p))];
  const tsconfig = {
    extends: relative(outDir, join(root, 'tsconfig.base.json')),
    compilerOptions: {
      noEmit: true,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
      // An example names a value to show it; an unused one is not a mistake there.
      noUnusedLocals: false,
      noUnusedParameters: false,
      rootDir: relative(outDir, root),
      paths: { rxkube: src('index.ts'), 'rxkube/core': src('core.ts'), 'rxkube/testing': src('testing/index.ts'), 'rxkube/metrics': src('metrics/index.ts'), 'rxkube/zod': src('crd/zod.ts'), 'rxkube/valibot': src('crd/valibot.ts') },
    },
    include: ['*.ts'],
  };
  writeFileSync(join(outDir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(outDir, 'tsconfig.json'), '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
  if (run.error !== undefined) throw run.error;
  const errors: DocExampleError[] = [];
  let last: DocExampleError | undefined;
  for (const line of run.stdout.split('\n')) {
    const m = /^(.*?)\((\d+),(\d+)\): error (.*)$/.exec(line);
    if (m === null) {
      // A diagnostic's further lines (elaboration) belong to the last one.
      if (last !== undefined && line.startsWith(' ')) (last as { message: string }).message += `\n${line}`;
      continue;
    }
    const [, path = '', row = '0', , message = ''] = m;
    const ex = origin.get(relative(outDir, join(root, path)));
    last = ex === undefined ? { file: path, line: Number(row), message } : { file: ex.file, line: ex.line + Number(row) - 1, message };
    errors.push(last);
  }
  if (run.status !== 0 && errors.length === 0) throw new Error(`tsc failed without diagnostics (status ${String(run.status)}): ${run.stdout}${run.stderr}`);
  return errors;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const examples = docExamples();
  const errors = checkDocExamples(examples);
  for (const e of errors) console.log(`${e.file}:${e.line}: ${e.message}`);
  console.log(`${examples.length} examples, ${errors.length} errors`);
  process.exitCode = errors.length === 0 ? 0 : 1;
}
