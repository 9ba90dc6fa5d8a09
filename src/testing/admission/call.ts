import { request } from 'node:https';
import { printable } from '../../errors/printable.js';

// One POST of a review to a webhook's `url` over node:https, trusting only its CA bundle when it has one, bounded in
// time and in the size of the answer, with errors worded as Go's HTTP client words them in kube-apiserver's messages.

/** The largest webhook answer read; past it the call fails, as a hostile webhook must not exhaust the simulator. */
export const MAX_WEBHOOK_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Why a call did not bring back a JSON answer: the `Reason` of kube-apiserver's ErrCallingWebhook. */
export class WebhookCallError extends Error {
  override readonly name = 'WebhookCallError';
}

const CERT_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

function networkReason(url: URL, err: NodeJS.ErrnoException): string {
  const host = `${url.hostname}:${url.port === '' ? '443' : url.port}`;
  if (err.code === 'ECONNREFUSED') return `dial tcp ${host}: connect: connection refused`;
  if (err.code !== undefined && CERT_ERRORS.has(err.code)) return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  if (err.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `tls: failed to verify certificate: x509: certificate is valid for other names, not ${url.hostname}`;
  if (err.code === 'CERT_HAS_EXPIRED') return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  return printable(err.message.slice(0, 300));
}

/**
 * POSTs `body` to `target` with `?timeout=<n>s` (as kube-apiserver tells a
 * webhook its deadline) and resolves with the parsed JSON answer of a 2xx;
 * rejects with a {@link WebhookCallError} carrying Go's wording otherwise:
 * `Post "<url>": context deadline exceeded` on timeout, the connection or
 * TLS failure, a non-2xx status, a body that is too large or not JSON.
 */
export function postJson(target: string, ca: string | undefined, body: unknown, timeoutSeconds: number): Promise<unknown> {
  const url = new URL(target);
  url.searchParams.set('timeout', `${timeoutSeconds}s`);
  const shown = `Post ${JSON.stringify(url.toString())}`;
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const fail = (reason: string): void => {
      clearTimeout(timer);
      reject(new WebhookCallError(`${shown}: ${reason}`));
    };
    const req = request(url, {
      method: 'POST',
      ...(ca === undefined ? {} : { ca }),
      headers: { 'content-type': 'application/json', accept: 'application/json, */*', 'content-length': payload.length },
      // One connection per call: a webhook server that is torn down between calls is not reached through a stale socket.
      agent: false,
    });
    const timer = setTimeout(() => {
      fail('context deadline exceeded');
      req.destroy();
    }, timeoutSeconds * 1000);
    req.on('error', (err: NodeJS.ErrnoException) => fail(networkReason(url, err)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_WEBHOOK_RESPONSE_BYTES) {
          fail(`the response body is larger than ${MAX_WEBHOOK_RESPONSE_BYTES} bytes`);
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      res.on('error', (err: NodeJS.ErrnoException) => fail(networkReason(url, err)));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) {
          fail(
            text.trim() === ''
              ? `the server responded with the status code ${code} but did not return more information`
              : `an error on the server (${JSON.stringify(printable(text.slice(0, 200)))}) has prevented the request from succeeding`,
          );
          return;
        }
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          fail(`the response is not JSON: ${printable(String(err instanceof Error ? err.message : err).slice(0, 200))}`);
        }
      });
    });
    req.end(payload);
  });
}
