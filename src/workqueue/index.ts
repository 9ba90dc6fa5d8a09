export { workQueue, type WorkQueue, type WorkQueueOptions, type GetOptions, type GetResult } from './WorkQueue.js';
export type { ItemsOptions, ProcessOptions, WorkOutcome, Worker } from './consume.js';
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
