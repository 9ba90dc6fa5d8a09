/**
 * A custom resource's schema that kube-apiserver would refuse: a construct a
 * structural schema cannot express, a `$ref` that refers to itself, a default
 * that does not validate. Thrown by `customResource` when the definition is
 * made, so the mistake is found where the schema is written rather than when
 * the CRD is applied.
 *
 * ## Example
 * ```ts
 * import { z } from 'zod';
 * import { customResource, CustomResourceSchemaError } from 'rxkube';
 *
 * try {
 *   customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: z.object({ owner: z.union([z.string(), z.object({ name: z.string() })]) }) });
 * } catch (err) {
 *   if (err instanceof CustomResourceSchemaError) console.log(err.field, err.problem); // spec.owner …
 * }
 * ```
 */
export class CustomResourceSchemaError extends Error {
  override readonly name = 'CustomResourceSchemaError';
  /** The dotted path of the schema node at fault (`spec.owner`, `status.conditions[]`). */
  readonly field: string;
  /** What is wrong there, and what to do instead. */
  readonly problem: string;

  /**
   * @param field The dotted path of the node at fault.
   * @param problem What is wrong, and what to do instead.
   */
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}
