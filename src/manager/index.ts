export { manager } from './manager.js';
export { runManager, type RunManagerOptions } from './runManager.js';
export { loadKubeConfig, type LoadKubeConfigOptions } from './kubeConfig.js';
export type { ManagerEvent, ManagerLeaderElection, ManagerMetrics, ManagerOptions } from './options.js';
export type { ManagerServerLimits } from './serverLimits.js';
export { certDirPairs, type CertDirOptions } from './certDir.js';
export type { TlsPair } from './certificates/tlsPair.js';
export type { WebhookServerMetrics, WebhookPathMetrics } from './webhookMetrics.js';
