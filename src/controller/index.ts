export { controller, type Controller } from './controller.js';
export type { ReconcileResult } from './stats.js';
export type { ControllerStatus } from './status.js';
export { TerminalError } from './TerminalError.js';
export { ReadYourWritesTimeoutError } from './ReadYourWritesTimeoutError.js';
export { ReconcileTimeoutError } from './ReconcileTimeoutError.js';
export {
  finalizer,
  FinalizerError,
  type FinalizerClient,
  type FinalizerHandlers,
  type FinalizerOptions,
  type FinalizerPhase,
} from './finalizer.js';
export type {
  ControllerOptions,
  ControllerSource,
  ErrorAction,
  ErrorPolicy,
  OwnsSource,
  ForSource,
  ReconcileAction,
  ReconcileContext,
  ReconcileOutcome,
  Reconciler,
  WatchesSource,
} from './types.js';
