export type { TlsPair } from './tlsPair.js';
export { generateCa, issueServing, selfSigned, type IssuedPair, type GenerateCaOptions, type ServingOptions } from './generate.js';
export { describePair, type PairDescription } from './describe.js';
export { CertificateError } from './CertificateError.js';
export { CertificateProvisionError } from './CertificateProvisionError.js';
export type { WebhookCertificates } from './options.js';
