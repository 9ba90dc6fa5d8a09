/**
 * The custom-resource definitions a module exports, found by their shape:
 * every export with a `crd()` method gives its CustomResourceDefinition.
 */

/**
 * The CRDs of a module's exports: `v.crd()` for every export `v` that has a
 * `crd` method (a definition made with `customResource`).
 *
 * @param mod the module namespace object.
 * @returns the CRD objects, in export order.
 */
export function crdsOfModule(mod: Record<string, unknown>): object[] {
  const crds: object[] = [];
  for (const v of Object.values(mod)) {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) continue;
    const crd = (v as { crd?: unknown }).crd;
    if (typeof crd !== 'function') continue;
    const made: unknown = (crd as () => unknown).call(v);
    if (made !== null && typeof made === 'object') crds.push(made);
  }
  return crds;
}
