export { KubeApiError, type StatusDetails } from './KubeApiError.js';
export { ExpiredError } from './ExpiredError.js';
export { TooManyRequestsError } from './TooManyRequestsError.js';
export { UnauthorizedError } from './UnauthorizedError.js';
export { ForbiddenError } from './ForbiddenError.js';
export { NotFoundError } from './NotFoundError.js';
export { ServerError } from './ServerError.js';
export { DecodeError } from './DecodeError.js';
export { ConnectionError } from './ConnectionError.js';
