// The members of the `admission` namespace that 'rxkube' exports: `admission.validating(…)`, `admission.deny(…)`.
export { validating, mutating } from './webhooks.js';
export { allow, deny } from './verdict.js';
