/**
 * `rxkube simulator --crd <file>`: the CustomResourceDefinitions of YAML or
 * JSON files and of modules, read as `rxkube crd install` reads them.
 */
import { crdsFrom } from './crdInstall.js';
import { UsageError } from './usage.js';

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
    try {
      all.push(...(await crdsFrom(path)));
    } catch (err) {
      throw err instanceof UsageError ? new UsageError(`--crd ${err.message}`) : err;
    }
  }
  return all;
}
