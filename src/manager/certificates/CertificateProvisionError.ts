/**
 * A step of `webhookCertificates` provisioning that failed, reported (to
 * rxkube's error reporter, `setErrorReporter`) and retried with backoff,
 * never ending the manager: webhooks keep being served with the pair the
 * Secret last held. The message names the object and what to do; `cause`
 * is the API error or `CertificateError` behind it. No key material is in
 * either.
 *
 * ## Example
 * ```ts
 * import { setErrorReporter } from 'rxkube';
 * import { CertificateProvisionError } from 'rxkube/core';
 *
 * setErrorReporter((err) => {
 *   if (err instanceof CertificateProvisionError && err.step === 'write-bundle') console.error('the CA bundle could not be written:', err.message);
 * });
 * ```
 */
export class CertificateProvisionError extends Error {
  override readonly name = 'CertificateProvisionError';
  /**
   * Which step failed:
   * - `read`: reading the Secret, a webhook configuration or a CRD;
   * - `generate`: generating the CA or the serving pair;
   * - `write-secret`: creating or updating the Secret;
   * - `write-bundle`: writing a CA bundle into a webhook configuration or a CRD;
   * - `crd-without-webhook`: a CRD of `customResources` has no `spec.conversion.webhook.clientConfig` to write the bundle into;
   * - `serve`: the Secret holds a pair replicas cannot serve (they keep serving the last good one).
   */
  readonly step: 'read' | 'generate' | 'write-secret' | 'write-bundle' | 'crd-without-webhook' | 'serve';

  /**
   * @param step which step failed.
   * @param message what failed and what to do.
   * @param cause the error behind it.
   */
  constructor(step: CertificateProvisionError['step'], message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.step = step;
  }
}
