export type { TlsPair } from './tlsPair.js';
export { generateCa, issueServing, selfSigned, type IssuedPair, type GenerateCaOptions, type ServingOptions } from './generate.js';
export { describePair, type PairDescription } from './describe.js';
export { CertificateError, type CertificateErrorCode } from './CertificateError.js';
export { CertificateProvisionError, type CertificateProvisionStep } from './CertificateProvisionError.js';
export type { WebhookCertificates } from './options.js';
