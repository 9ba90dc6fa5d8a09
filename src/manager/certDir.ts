import { createPrivateKey, X509Certificate } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { Observable } from 'rxjs';
import { printable } from '../errors/printable.js';
import { reportError } from '../errors/reportError.js';
import { describeValue, numberOption } from '../options/validate.js';
import type { TlsPair } from './certificates/tlsPair.js';

/**
 * Options of {@link certDirPairs}.
 *
 * ## Example
 * ```ts
 * import { certDirPairs, type CertDirOptions } from 'rxkube/core';
 *
 * const opts: CertDirOptions = { pollMs: 30_000 };
 * certDirPairs('/tmp/k8s-webhook-server/serving-certs', opts).subscribe();
 * ```
 */
export interface CertDirOptions {
  /** The certificate's file name in the directory. @default 'tls.crt' */
  readonly certName?: string;
  /** The key's file name in the directory. @default 'tls.key' */
  readonly keyName?: string;
  /**
   * How often the files are read again besides the change notifications, which some file systems (network
   * mounts, some container overlays) never send. controller-runtime's certificate watcher polls every 10 s too.
   * @default 10_000
   */
  readonly pollMs?: number;
}

/**
 * The serving certificate and key kept in a directory, as controller-runtime
 * and cert-manager lay them out (`tls.crt`, `tls.key`): the pair read at
 * subscription, then each new valid pair once the files change. The
 * directory is watched (`fs.watch`: a kubelet Secret volume swaps its
 * `..data` symlink; cert-manager's CSI driver rewrites the files) and read
 * again every `pollMs`. A pair that cannot be used (half written, a key that
 * does not match the certificate) is reported once and skipped: the last
 * good pair stays in use until the files are right again.
 *
 * ## Example
 * ```ts
 * import { certDirPairs } from 'rxkube/core';
 *
 * certDirPairs('/tmp/k8s-webhook-server/serving-certs').subscribe({
 *   next: (pair) => console.log('serving a certificate of', pair.cert.length, 'bytes'),
 *   error: (err) => console.error(err.message), // missing or invalid at start, naming the files
 * });
 * ```
 *
 * @param dir the directory holding the pair.
 * @param opts the file names and the poll interval.
 * @returns the pairs: it errors when the first read fails, and never completes.
 */
export function certDirPairs(dir: string, opts: CertDirOptions = {}): Observable<TlsPair> {
  if (typeof dir !== 'string' || dir === '') throw new TypeError(`certDirPairs: the directory must be a non-empty string, got ${describeValue(dir)}`);
  const certFile = join(dir, opts.certName ?? 'tls.crt');
  const keyFile = join(dir, opts.keyName ?? 'tls.key');
  // A Node timer's longest wait is 2³¹−1 ms; a longer one would fire after 1 ms.
  const pollMs = numberOption('certDirPairs', 'pollMs', opts.pollMs, 10_000, { min: 1, max: 2 ** 31 - 1, integer: true });

  return new Observable<TlsPair>((subscriber) => {
    let closed = false;
    let last: TlsPair | undefined;
    // The last unusable content reported, so a poll does not report the same files again and again.
    let lastRefused = '';
    let reading = false;
    let again = false;
    let watcher: FSWatcher | undefined;
    let timer: NodeJS.Timeout | undefined;

    const read = async (): Promise<void> => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const outcome = await readPair(certFile, keyFile);
          if (closed) return;
          if (typeof outcome === 'string') {
            if (last === undefined) {
              subscriber.error(new Error(`manager: no usable serving certificate in ${dir}: ${outcome} (expected ${certFile} and ${keyFile}, PEM, the key matching the certificate)`));
              return;
            }
            if (outcome !== lastRefused) {
              lastRefused = outcome;
              reportError(new Error(`manager: the serving certificate in ${dir} was not reloaded, the previous one is kept: ${outcome}`));
            }
          } else if (last === undefined || last.cert !== outcome.cert || last.key !== outcome.key) {
            last = outcome;
            lastRefused = '';
            subscriber.next(outcome);
          }
        } while (again && !closed);
      } finally {
        reading = false;
      }
    };

    void read().then(() => {
      if (closed || last === undefined) return;
      try {
        watcher = watch(dir, { persistent: false }, () => void read());
        watcher.on('error', (err) => {
          reportError(new Error(`manager: watching ${dir} for new certificates failed, reading it every ${pollMs} ms instead: ${err.message}`, { cause: err }));
          watcher?.close();
        });
      } catch (err) {
        reportError(new Error(`manager: cannot watch ${dir} for new certificates, reading it every ${pollMs} ms instead: ${(err as Error).message}`, { cause: err }));
      }
      timer = setInterval(() => void read(), pollMs);
      timer.unref();
    });
    return () => {
      closed = true;
      watcher?.close();
      clearInterval(timer);
    };
  });
}

/**
 * The pair in the two files, or why it cannot be served: the certificate parses, the key parses and matches it,
 * and Node's TLS accepts both. (Node's TLS alone takes an empty certificate.)
 */
async function readPair(certFile: string, keyFile: string): Promise<TlsPair | string> {
  let cert: string;
  let key: string;
  try {
    [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  } catch (err) {
    return `cannot read it: ${printable((err as Error).message)}`;
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    return `the certificate is not PEM X.509 (${printable((err as Error).message)})`;
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) return 'the key does not match the certificate';
  } catch (err) {
    return `the key is not a PEM private key (${printable((err as Error).message)})`;
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    return `TLS cannot use the pair (${printable((err as Error).message)})`;
  }
  return { cert, key };
}
