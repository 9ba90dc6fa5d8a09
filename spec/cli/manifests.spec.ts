import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './run.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rxkube-manifests-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Doc = { apiVersion: string; kind: string; metadata: { name: string }; webhooks?: any[]; spec?: any };

describe('rxkube manifests', () => {
  it('prints the CRDs, then the validating and mutating configurations of the webhooks a module exports', async () => {
    const { code, stdout, stderr } = await runCli(['manifests', fixture('webhooksModule.ts'), '--service', 'shop-system/shop-webhooks:8443']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const docs = loadAll(stdout) as Doc[];
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).toEqual([
      'CustomResourceDefinition shops.example.com',
      'CustomResourceDefinition websites.example.com',
      'ValidatingWebhookConfiguration shop-webhooks',
      'MutatingWebhookConfiguration shop-webhooks',
    ]);
    const [shop, , validating, mutating] = docs as [Doc, Doc, Doc, Doc];
    // A definition that converts gets the conversion webhook at /convert through the same Service.
    expect(shop.spec.conversion.webhook.clientConfig).toEqual({ service: { namespace: 'shop-system', name: 'shop-webhooks', port: 8443, path: '/convert' } });
    expect(validating.webhooks).toEqual([
      {
        name: 'vwebsite.example.com',
        admissionReviewVersions: ['v1'],
        clientConfig: { service: { namespace: 'shop-system', name: 'shop-webhooks', port: 8443, path: '/validate-example-com-v1-website' } },
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites'], scope: 'Namespaced' }],
        failurePolicy: 'Fail',
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        timeoutSeconds: 10,
      },
    ]);
    expect(mutating.webhooks?.map((w) => [w.name, w.clientConfig.service.path, w.failurePolicy, w.timeoutSeconds, w.reinvocationPolicy])).toEqual([
      ['mwebsite.example.com', '/mutate-example-com-v1-website', 'Fail', 10, 'IfNeeded'],
      ['mdeployment.apps.k8s.io', '/mutate-apps-v1-deployment', 'Ignore', 5, 'Never'],
    ]);
  });

  it('--url appends each path, --name and --ca-bundle-file are written, -o json gives a v1 List', async () => {
    const ca = join(dir, 'ca.crt');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(ca, pem);
    const { code, stdout, stderr } = await runCli(['manifests', fixture('webhooksModule.ts'), '--url', 'https://127.0.0.1:9443', '--name', 'e2e', '--ca-bundle-file', ca, '-o', 'json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as { kind: string; items: Doc[] };
    expect(list.kind).toBe('List');
    const validating = list.items.find((d) => d.kind === 'ValidatingWebhookConfiguration') as Doc;
    expect(validating.metadata.name).toBe('e2e');
    expect(validating.webhooks?.[0].clientConfig).toEqual({ url: 'https://127.0.0.1:9443/validate-example-com-v1-website', caBundle: Buffer.from(pem).toString('base64') });
    const shop = list.items.find((d) => d.metadata.name === 'shops.example.com') as Doc;
    expect(shop.spec.conversion.webhook.clientConfig).toEqual({ url: 'https://127.0.0.1:9443/convert', caBundle: Buffer.from(pem).toString('base64') });
  });

  it('needs exactly one of --service and --url, well formed', async () => {
    for (const args of [[], ['--service', 'a/b', '--url', 'https://h'], ['--service', 'nonamespace'], ['--url', 'http://h']]) {
      const { code, stdout, stderr } = await runCli(['manifests', fixture('webhooksModule.ts'), ...args]);
      expect(code, args.join(' ')).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/^error: .*(--service|--url)/);
    }
  });

  it('a definition with converters and no conversion webhook exported is an error saying what to export', async () => {
    const { code, stdout, stderr } = await runCli(['manifests', fixture('convertingWithoutWebhook.ts'), '--service', 'a/b']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/customResources\[0\] \(Shop\) converts between versions, and no conversion webhook among its exports converts it; export admission\.conversion\(Shop\) beside it/);
  });

  it('a module with no webhook and no definition is an error naming its exports', async () => {
    const { code, stderr } = await runCli(['manifests', fixture('noDefinitions.mjs'), '--service', 'a/b']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/exports no webhook .* its exports: /);
  });

  it('is in the help', async () => {
    const { stdout } = await runCli(['--help']);
    expect(stdout).toMatch(/manifests \[options\] <module>/);
  });
});
