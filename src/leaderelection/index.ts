export { leaderElection } from './leaderElection.js';
export { leaseLock, type Lease, type LeaseLockOptions } from './leaseLock.js';
export { JITTER_FACTOR, type LeaderElectionOptions } from './options.js';
export type { LeaderElectionRecord, LockObservation, ResourceLock, Leadership } from './types.js';
