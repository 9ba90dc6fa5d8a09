export { workQueue, type WorkQueue } from './WorkQueue.js';
export type { WorkQueueOptions, GetOptions, GetResult, ItemsOptions, ProcessOptions, WorkOutcome, Worker } from './types.js';
export type { WorkQueueMetrics, HistogramSnapshot } from './metrics.js';
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
