import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every list of option names is checked against its options interface by the compiler (`optionNames`, LT-61):
// a hand-kept string array drifts from the interface it guards, silently refusing a new option or accepting a
// removed one.
const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('option-name lists', () => {
  it('every list given to checkOptionNames is made by optionNames', () => {
    const handKept: string[] = [];
    // options/validate.ts defines checkOptionNames and optionNames.
    for (const file of sourceFiles(SRC).filter((f) => !f.endsWith('options/validate.ts'))) {
      const text = readFileSync(file, 'utf8');
      // checkOptionNames, and checkFifoOptions, which hands its `names` on to it (its callers' lists are checked here).
      for (const m of text.matchAll(/(checkOptionNames|checkFifoOptions)\(\s*[^,]+,\s*[^,]+,\s*([^),]*)[),]/g)) {
        const arg = (m[2] as string).trim();
        if (text.slice(0, m.index).endsWith('function ')) continue; // the declaration, not a call
        // a list made in place, or the forwarding helper's own parameter
        if (arg.startsWith('optionNames<') || (m[1] === 'checkOptionNames' && arg === 'names' && /function checkFifoOptions\(/.test(text))) continue;
        // a list, or a choice between lists, each of which must be made by optionNames
        const lists = arg.split(/[?:]/).map((part) => part.trim()).filter((part) => /^[A-Za-z_$][\w$]*$/.test(part));
        if (lists.length === 0 || arg.startsWith('[')) handKept.push(`${relative(SRC, file)}: ${arg}`);
        for (const list of arg.includes('?') ? lists.slice(1) : lists) {
          if (!new RegExp(`\\b${list}\\s*=\\s*optionNames\\b`).test(text)) handKept.push(`${relative(SRC, file)}: ${list}`);
        }
      }
    }
    expect(handKept).toEqual([]);
  });
});
