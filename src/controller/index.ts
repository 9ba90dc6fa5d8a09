export { controller, type Controller } from './controller.js';
export type { ReconcileResult } from './stats.js';
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
  ControllerStatus,
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
