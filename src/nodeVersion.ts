/**
 * Fails the import with a plain sentence on a Node.js too old for rxkube's
 * HTTP stack, rather than letting it crash deep inside a dependency.
 * Imported first by every entry point.
 */
const REQUIRED = [22, 19, 0] as const;

/**
 * Throws when `version` (as in `process.versions.node`) is older than rxkube needs.
 *
 * @param version a Node.js version, `major.minor.patch`.
 */
export function assertNodeVersion(version: string): void {
  const have = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < REQUIRED.length; i++) {
    const h = have[i] ?? 0;
    const want = REQUIRED[i] as number;
    if (h > want) return;
    if (h < want) {
      throw new Error(`rxkube needs Node.js >= ${REQUIRED.join('.')}; this is Node.js ${version}. Upgrade Node.js: rxkube's HTTP client (undici) needs the newer runtime.`);
    }
  }
}

assertNodeVersion(process.versions.node);
