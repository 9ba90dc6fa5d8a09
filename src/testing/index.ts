import '../nodeVersion.js';
export { startApiServer, ApiServer } from './ApiServer.js';
export type { ApiServerOptions, ApiServerFaults, AuditEvent, RestartOptions, ResourceName } from './ApiServer.js';
export type { ResourceDefinition } from './storage/resources.js';
export type { SimulatedUser, AccessAttributes, AccessDecision } from './auth/users.js';
export type {
  Fault,
  FaultTarget,
  FaultVerb,
} from './faults/faults.js';
export type { WatchDelay, WatchDelayOptions } from './watch/watchDelay.js';
export type { Churn, ChurnOptions } from './faults/churn.js';
export { StatusError } from './server/StatusError.js';
export type { Status, StatusErrorDetails } from './server/StatusError.js';
