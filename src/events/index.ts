export { recorder } from './recorder.js';
export type { EventRecorder, EventRecorderOptions, EventDetails } from './types.js';
