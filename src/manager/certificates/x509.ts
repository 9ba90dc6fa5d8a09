type X509Module = typeof import('@peculiar/x509');

// Loaded on first use only, so a manager that never provisions certificates never pays for it.
let loading: Promise<X509Module> | undefined;

/**
 * Loads @peculiar/x509 (internal). The library's dependency-injection
 * container insists that `Reflect.getMetadata` exists while its module is
 * evaluated, although none of its classes takes constructor parameters to
 * read metadata for. Without a reflect-metadata polyfill, two functions that
 * find no metadata are defined on `Reflect` for the length of the import and
 * removed right after, so nothing global outlives the load and a polyfill
 * loaded later is not shadowed.
 */
export function loadX509(): Promise<X509Module> {
  loading ??= (async () => {
    const reflect = Reflect as unknown as Record<string, unknown>;
    const lent = typeof reflect['getMetadata'] !== 'function';
    if (lent) {
      for (const key of ['getMetadata', 'getOwnMetadata']) {
        Object.defineProperty(reflect, key, { value: () => undefined, configurable: true, writable: true, enumerable: false });
      }
    }
    try {
      return await import('@peculiar/x509');
    } catch (err) {
      // Not remembered: the next call tries again.
      loading = undefined;
      throw err;
    } finally {
      if (lent) {
        delete reflect['getMetadata'];
        delete reflect['getOwnMetadata'];
      }
    }
  })();
  return loading;
}
