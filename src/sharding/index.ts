export { shardLabels, ownerRingKey, type ShardLabels } from './labels.js';
export type { ObservedShardLease, ShardMembers } from './members.js';
export { sharder } from './sharder.js';
export type { SharderOptions, ShardedOwns, ShardingEvent } from './sharderOptions.js';
export { shardedController } from './shardedController.js';
export type { ShardedControllerOptions, ShardEvent } from './shardedOptions.js';
export { hashRing, type HashRing, type HashRingOptions } from './ring.js';
