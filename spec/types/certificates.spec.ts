import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { customResource, manager, type ManagerOptions } from '../../src/index.js';
import {
  CertificateError,
  CertificateProvisionError,
  describePair,
  generateCa,
  issueServing,
  selfSigned,
  type IssuedPair,
  type PairDescription,
  type TlsPair,
  type WebhookCertificates,
} from '../../src/core.js';
import { offlineKubeConfig } from '../helpers/offlineKubeConfig.js';

// Checked by `tsc`: each @ts-expect-error must be an error.
const kc = offlineKubeConfig();
const Website = customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: z.object({ image: z.string() }) });

describe('certificate types', () => {
  it('generates PEM pairs with their validity, and reads them back', () => {
    expectTypeOf(generateCa).returns.resolves.toEqualTypeOf<IssuedPair>();
    expectTypeOf(issueServing).returns.resolves.toEqualTypeOf<IssuedPair>();
    expectTypeOf(selfSigned).returns.resolves.toEqualTypeOf<IssuedPair>();
    expectTypeOf(describePair).returns.resolves.toEqualTypeOf<PairDescription>();
    expectTypeOf<IssuedPair>().toExtend<TlsPair>();
    expectTypeOf<PairDescription['issuerCa']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<CertificateError['code']>().toEqualTypeOf<'malformed-certificate' | 'malformed-key' | 'key-mismatch' | 'not-a-ca' | 'unsupported-key'>();
    expectTypeOf<CertificateProvisionError['step']>().toEqualTypeOf<'read' | 'generate' | 'write-secret' | 'write-bundle' | 'crd-without-webhook' | 'serve'>();
    const typed = async (pair: TlsPair): Promise<void> => {
      // @ts-expect-error: a pair is read-only
      pair.cert = '';
      // @ts-expect-error: the names are required
      await selfSigned({ validityMs: 1 });
      // @ts-expect-error: issueServing signs with a CA pair, not a description
      await issueServing(await describePair(pair), { dnsNames: ['web'], validityMs: 1 });
    };
    void typed;
  });

  it('takes webhookCertificates with customResource definitions, and refuses a missing service or a string kubeconfig', () => {
    const ok: WebhookCertificates = { kubeConfig: kc, name: 'web', service: { namespace: 'ops', name: 'web' }, customResources: [Website], validityMs: 1, rotateBeforeMs: 0 };
    expectTypeOf<ManagerOptions['webhookCertificates']>().toEqualTypeOf<WebhookCertificates | undefined>();
    const typed = (): void => {
      manager({ controllers: [], webhookCertificates: ok });
      // @ts-expect-error: the Service is required: its names are the certificate's
      manager({ controllers: [], webhookCertificates: { kubeConfig: kc, name: 'web' } });
      // @ts-expect-error: a KubeConfig, not a path
      manager({ controllers: [], webhookCertificates: { kubeConfig: '~/.kube/config', name: 'web', service: { namespace: 'ops', name: 'web' } } });
      // @ts-expect-error: a definition, not a CRD name
      manager({ controllers: [], webhookCertificates: { ...ok, customResources: ['websites.example.com'] } });
      manager({ controllers: [], webhookCertificates: { ...ok, hosts: ['127.0.0.1', 'webhooks.test'] } });
      manager({ controllers: [], webhookCertificates: { ...ok, caValidityMs: 3650 * 86_400_000, caSettleMs: 0 } });
      // @ts-expect-error: a number of milliseconds, not a duration string
      manager({ controllers: [], webhookCertificates: { ...ok, caSettleMs: '5m' } });
      // @ts-expect-error: a list of hosts, even of one
      manager({ controllers: [], webhookCertificates: { ...ok, hosts: '127.0.0.1' } });
    };
    void typed;
  });
});
