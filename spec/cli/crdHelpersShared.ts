/** What the `rxkube crd` specs of the simulator tier and of the e2e tier share. */

/** The smallest CRD a server accepts: a namespaced `<plural>.example.com` whose objects keep every field. */
export function minimalCrd(plural: string, kind: string, shortNames: string[]): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, shortNames },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

/**
 * A schema as a definition carries it: `anyOf` of a bare integer and a bare string beside
 * `x-kubernetes-int-or-string` says nothing the marker does not, and a definition writes the marker alone (CR-11).
 */
export function asCarried(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(asCarried);
  if (schema === null || typeof schema !== 'object') return schema;
  const entries = Object.entries(schema as Record<string, unknown>);
  const intOrString = (schema as Record<string, unknown>)['x-kubernetes-int-or-string'] === true;
  return Object.fromEntries(entries.filter(([k]) => !(intOrString && k === 'anyOf')).map(([k, v]) => [k, asCarried(v)]));
}
