export { hashRing, type HashRing, type HashRingOptions } from './ring.js';
export { shardLabels, ownerRingKey, type ShardLabels } from './labels.js';
export { liveShards, shardMembers, type LiveShardsOptions, type ObservedShardLease, type ShardMembers, type ShardMembersOptions } from './members.js';
export { sharder } from './sharder.js';
export type { SharderOptions, SharderSource, ShardedOwns, ShardingEvent } from './sharderOptions.js';
export { shardedController } from './shardedController.js';
export type { ShardedControllerOptions, ShardEvent } from './shardedOptions.js';
