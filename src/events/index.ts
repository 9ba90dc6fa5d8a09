export { recorder } from './recorder.js';
export type { EventRecorder, EventRecorderOptions, EventRecorderStatus, EventDetails } from './types.js';
