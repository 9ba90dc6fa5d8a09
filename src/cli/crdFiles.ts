/**
 * `rxkube simulator --crd <file>`: the CustomResourceDefinitions of YAML or
 * JSON files and of modules, read as `rxkube crd install` reads them; a
 * module's definitions with converters point at `--webhook-url`, or are
 * served with conversion None when it is not given (WH-144).
 */
import type { CrdOptions } from '../crd/crdConversion.js';
import { printable } from '../errors/printable.js';
import { loadCrdModule } from './crdExports.js';
import { readCrdFile } from './crdManifest.js';
import { UsageError } from './usage.js';

/** What the `--crd` paths give. */
export interface LoadedCrds {
  readonly crds: object[];
  /** `Website (./website.ts)` for each definition with converters served with conversion None. */
  readonly withoutConversion: string[];
}

/**
 * Loads the CRDs of every `--crd` path, in order.
 *
 * @param paths the files given.
 * @param webhook the conversion webhook of the modules' definitions with converters (`--webhook-url`); without it they get conversion None.
 * @returns the CRD objects, and which definitions with converters convert nothing.
 * @throws UsageError for a file that cannot be read, holds something else, or has an unknown extension, or a webhook no definition takes.
 */
export async function loadCrds(paths: readonly string[], webhook?: CrdOptions): Promise<LoadedCrds> {
  const crds: object[] = [];
  const withoutConversion: string[] = [];
  let converting = 0;
  for (const path of paths) {
    try {
      if (!/\.(m?ts|m?js)$/i.test(path)) {
        crds.push(...readCrdFile(path));
        continue;
      }
      for (const e of await loadCrdModule(path, webhook ?? 'none', { requireConverting: false })) {
        crds.push(e.crd);
        if (!e.converts) continue;
        converting += 1;
        if (webhook === undefined) withoutConversion.push(`${e.name} (${printable(path)})`);
      }
    } catch (err) {
      throw err instanceof UsageError ? new UsageError(`--crd ${err.message}`) : err;
    }
  }
  if (webhook !== undefined && converting === 0) {
    throw new UsageError('--webhook-url is the conversion webhook of definitions with converters (a conversion option), and no module given with --crd exports one');
  }
  return { crds, withoutConversion };
}
