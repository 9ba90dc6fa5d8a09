export type { TlsPair } from './tlsPair.js';
export { generateCa, issueServing, selfSigned, type IssuedPair, type GenerateCaOptions, type ServingOptions } from './generate.js';
export { describePair, type PairDescription } from './describe.js';
export { CertificateError, type CertificateErrorCode } from './CertificateError.js';
