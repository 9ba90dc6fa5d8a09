import '../engine.js';
export { startApiServer, ApiServer } from './ApiServer.js';
export type { ApiServerOptions, ApiServerStats, ApiServerFaults, AuditEvent, RestartOptions, ResourceName } from './ApiServer.js';
export type { ResourceDefinition } from './resources.js';
export type {
  Fault,
  FaultTarget,
  FaultVerb,
  StatusFault,
  StallFault,
  TrickleFault,
  ResetMidLineFault,
  EndMidLineFault,
  MalformedLineFault,
  ErrorEventFault,
  SilentWatchFault,
  ListMetadataLastFault,
} from './faults.js';
export type { WatchDelay, WatchDelayOptions } from './watchDelay.js';
export type { Churn, ChurnOptions, ChurnResult } from './churn.js';
export type { Preconditions } from './storage.js';
export { StatusError } from './StatusError.js';
export type { Status, StatusDetails } from './StatusError.js';
