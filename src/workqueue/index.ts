export { workQueue, type WorkQueue } from './WorkQueue.js';
export { LOW_PRIORITY } from './priority.js';
export type { WorkQueueOptions, WorkQueueAddOptions, WorkQueueGetOptions, WorkQueueItemsOptions, WorkQueueProcessOptions, WorkOutcome } from './types.js';
export type { DurationHistogram, WorkQueueMetrics } from './metrics.js';
export {
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  bucketRateLimiter,
  maxOfRateLimiter,
  withMaxWaitRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  type RateLimiter,
  type ItemExponentialFailureRateLimiterOptions,
  type ItemFastSlowRateLimiterOptions,
  type BucketRateLimiterOptions,
  type DefaultControllerRateLimiterOptions,
} from './rateLimiters.js';
