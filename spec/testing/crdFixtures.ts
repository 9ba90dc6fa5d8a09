// CustomResourceDefinitions the simulator's CRD specs install, written as `kubectl apply` would send them.

/** A namespaced `Website` (example.com/v1) with status and scale subresources and a printer column. */
export function websiteCrd(overrides: { plural?: string; kind?: string; group?: string; columns?: unknown[] | undefined } = {}): Record<string, any> {
  const group = overrides.group ?? 'example.com';
  const plural = overrides.plural ?? 'websites';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, kind: overrides.kind ?? 'Website', shortNames: ['ws'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { image: { type: 'string' }, replicas: { type: 'integer' }, selector: { type: 'string' } } },
                status: {
                  type: 'object',
                  properties: {
                    readyReplicas: { type: 'integer' },
                    selector: { type: 'string' },
                    conditions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } },
                  },
                },
              },
            },
          },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas', labelSelectorPath: '.status.selector' } },
          ...('columns' in overrides
            ? overrides.columns === undefined
              ? {}
              : { additionalPrinterColumns: overrides.columns }
            : {
                additionalPrinterColumns: [
                  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
                  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
                  { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
                ],
              }),
        },
      ],
    },
  };
}

/** A Website object. */
export function website(name: string, spec: Record<string, unknown> = { image: 'nginx', replicas: 1 }, extra: Record<string, unknown> = {}): Record<string, any> {
  return { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name, namespace: 'default' }, spec, ...extra };
}
