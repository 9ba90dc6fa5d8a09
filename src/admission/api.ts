// The members of the `admission` namespace that 'rxkube' exports: `admission.validating(…)`, `admission.deny(…)`, `admission.conversion(Website)`.
export { validating, mutating } from './webhooks.js';
export { allow, deny } from './verdict.js';
export { conversionWebhook as conversion } from './conversion.js';
