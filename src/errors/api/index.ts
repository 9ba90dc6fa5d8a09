export { KubeApiError, type ApiStatus } from './KubeApiError.js';
export {
  isNotFound,
  isConflict,
  isAlreadyExists,
  isExpired,
  isTooManyRequests,
  isUnauthorized,
  isForbidden,
  isInvalid,
  isServerError,
} from './guards.js';
export { DecodeError } from './DecodeError.js';
export { ConnectionError } from './ConnectionError.js';
export { ResourceNotServedError } from './ResourceNotServedError.js';
