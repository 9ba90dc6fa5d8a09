export { manager } from './manager.js';
export { runManager, type RunManagerOptions } from './runManager.js';
export { loadKubeConfig, type LoadKubeConfigOptions } from './kubeConfig.js';
export type { ManagerEvent, ManagerLeaderElection, ManagerMetrics, ManagerOptions } from './options.js';
export type { ManagerServerLimits } from './serverLimits.js';
export {
  generateCa,
  issueServing,
  selfSigned,
  describePair,
  CertificateError,
  type TlsPair,
  type IssuedPair,
  type GenerateCaOptions,
  type ServingOptions,
  type PairDescription,
  CertificateProvisionError,
  type WebhookCertificates,
} from './certificates/index.js';
export { certDirPairs, type CertDirOptions } from './certDir.js';
export type { WebhookServerMetrics } from './webhookMetrics.js';
export type { ManagerMetricsSecure } from './servingOptions.js';
