import { KubeApiError } from './KubeApiError.js';

/**
 * A LIST (or streaming list) answered 404 because the API server does not
 * serve the resource at all, as its discovery says: the group/version is
 * not served, or it serves no resource of that name. The usual cause is a
 * CustomResourceDefinition not installed yet, or a resource name with a
 * typo (`website` for `websites`); the message says which, with the
 * resource names the group/version does serve that are close to the one
 * asked for (CR-130).
 *
 * It is a {@link KubeApiError} with status 404 (`isNotFound` holds), and an
 * informer keeps retrying it with backoff, since the CRD may be installed
 * later; a program that should stop instead (a CLI, a test) tells it apart
 * with `instanceof`.
 *
 * ## Example
 * ```ts
 * import { informer, kubeSource, ResourceNotServedError } from 'rxkube';
 * import type { KubeConfig } from '@kubernetes/client-node';
 * declare const kc: KubeConfig;
 *
 * const websites = informer(kubeSource(kc, 'example.com/v1/websites'));
 * websites.errors$.subscribe((err) => {
 *   if (err instanceof ResourceNotServedError) console.error(`${err.message} (suggestions: ${err.suggestions.join(', ') || 'none'})`);
 * });
 * ```
 */
export class ResourceNotServedError extends KubeApiError {
  override readonly name = 'ResourceNotServedError';
  /** The group/version asked for: `example.com/v1`, or `v1` for the core group. */
  readonly groupVersion: string;
  /** The resource name asked for (`website`). */
  readonly resource: string;
  /** Whether the server serves the group/version at all (false: no such group/version, likely no CRD). */
  readonly groupVersionServed: boolean;
  /** Resource names the group/version serves that may be what was meant (`websites`), best first; escaped. */
  readonly suggestions: readonly string[];

  constructor(
    notFound: KubeApiError,
    message: string,
    what: { readonly groupVersion: string; readonly resource: string; readonly groupVersionServed: boolean; readonly suggestions: readonly string[] },
  ) {
    super(404, message, {
      reason: notFound.reason,
      serverMessage: notFound.serverMessage,
      details: notFound.details,
      retryAfterSeconds: notFound.retryAfterSeconds,
      cause: notFound,
    });
    this.groupVersion = what.groupVersion;
    this.resource = what.resource;
    this.groupVersionServed = what.groupVersionServed;
    this.suggestions = what.suggestions;
  }
}
