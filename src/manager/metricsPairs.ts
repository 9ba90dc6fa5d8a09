import { hostname } from 'node:os';
import { defer, from, map, type Observable } from 'rxjs';
import { certDirPairs } from './certDir.js';
import { DNS_NAME, selfSigned } from './certificates/generate.js';
import type { TlsPair } from './certificates/tlsPair.js';

// A year: the certificate lives as long as the process, and a scraper that trusts it skips verification anyway.
const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The secure metrics server's certificates: the pair of `certDir`, reloaded as it changes (WH-68, WH-69), or
 * without one a self-signed pair made in memory at start for `localhost`, the host name and loopback, as
 * controller-runtime's secure metrics server makes one when given no certificate (WH-80).
 */
export function metricsPairs(certDir: string | undefined): Observable<TlsPair> {
  if (certDir !== undefined) return certDirPairs(certDir);
  const host = hostname().toLowerCase();
  const dnsNames = DNS_NAME.test(host) && host !== 'localhost' ? ['localhost', host] : ['localhost'];
  return defer(() => from(selfSigned({ dnsNames, ipAddresses: ['127.0.0.1', '::1'], validityMs: SELF_SIGNED_VALIDITY_MS }))).pipe(map(({ cert, key }) => ({ cert, key })));
}
