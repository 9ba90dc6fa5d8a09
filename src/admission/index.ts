/**
 * Admission and conversion webhooks: `admission.validating` and
 * `admission.mutating` make webhooks for a resource, `admission.allow` and
 * `admission.deny` make a handler's verdict, `admission.conversion` serves a
 * custom resource's converters. The runner serves them (`runManager({ webhooks })`)
 * and `webhookManifests` registers them.
 *
 * ## Example
 * ```ts
 * import { admission } from 'rxkube';
 *
 * const noLatest = admission.validating('v1/pods', ({ object }) =>
 *   object.spec?.containers.some((c) => c.image?.endsWith(':latest')) ? admission.deny('pin an image tag, not :latest') : admission.allow());
 * console.log(noLatest.path); // /validate--v1-pod
 * ```
 */
export * as admission from './api.js';

export { isWebhook } from './isWebhook.js';
export { webhookManifests, type WebhookManifestsOptions, type WebhookClientConfig } from './manifests.js';
export { AdmissionWebhookError } from './AdmissionWebhookError.js';
export type { AdmissionWebhook, ValidatingWebhook, MutatingWebhook } from './webhooks.js';
export type { AdmissionContext, AdmissionContextBase, OperationContexts, ValidatingHandler, MutatingHandler, OperationsOf } from './context.js';
export type { WebhookOptions, MutatingWebhookOptions, ParsedWebhookOptions } from './options.js';
export type { AdmissionResource, WebhookTarget } from './target.js';
export type { AdmissionVerdict, AllowOptions, DenyOptions } from './verdict.js';
export type {
  Webhook,
  WebhookAnswer,
  Operation as AdmissionOperation,
  AdmissionReview,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionStatus,
  UserInfo,
  GroupVersionKind,
  GroupVersionResource,
} from './types.js';
