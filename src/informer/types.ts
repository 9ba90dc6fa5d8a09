export type { InformerEvent } from '../store/events.js';
