import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/testing/index.js';
import { runCli } from './run.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rxkube-crd-conversion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ==\n-----END CERTIFICATE-----\n';

interface Crd {
  metadata: { name: string };
  spec: { conversion?: { strategy: string; webhook: { conversionReviewVersions: string[]; clientConfig: Record<string, unknown> } } };
}
const byName = (stdout: string): Record<string, Crd> => Object.fromEntries((loadAll(stdout) as Crd[]).map((c) => [c.metadata.name, c]));

describe('rxkube crd generate with a conversion webhook', () => {
  it('--webhook-service gives the definition with converters its spec.conversion, and the other none', async () => {
    const { code, stdout, stderr } = await runCli(['crd', 'generate', fixture('conversionModule.ts'), '--webhook-service', 'web-system/web-webhook:9443']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const crds = byName(stdout);
    expect(crds['websites.example.com']?.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'web-system', name: 'web-webhook', path: '/convert', port: 9443 } } },
    });
    expect(crds['blogs.example.com']?.spec.conversion).toBeUndefined();
  });

  it('--webhook-url and --ca-bundle-file give a URL and the CA bundle, base64', async () => {
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, PEM);
    const { code, stdout } = await runCli(['crd', 'generate', fixture('conversionModule.ts'), '--webhook-url', 'https://127.0.0.1:9443/convert', '--ca-bundle-file', ca]);
    expect(code).toBe(0);
    expect(byName(stdout)['websites.example.com']?.spec.conversion?.webhook.clientConfig).toEqual({ url: 'https://127.0.0.1:9443/convert', caBundle: Buffer.from(PEM).toString('base64') });
  });

  it.each([
    ['no webhook for a definition with converters', [], /export Website: crd\(\) threw TypeError: Website.crd: Website has converters.*\(its CRD needs the conversion webhook: pass --webhook-service <namespace>\/<name>\[:port\] or --webhook-url <url>\)/],
    ['both flags', ['--webhook-service', 'a/b', '--webhook-url', 'https://h/convert'], /--webhook-service and --webhook-url: give one of them/],
    ['a malformed service', ['--webhook-service', 'web-webhook'], /--webhook-service must be <namespace>\/<name>\[:port\]/],
    ['a service name the API server refuses', ['--webhook-service', 'a/B'], /crd\(\) threw TypeError: Website.crd: conversionWebhook.service.name must be a Service's name/],
    ['an http URL', ['--webhook-url', 'http://h/convert'], /conversionWebhook.url must be an https:\/\/ URL/],
    ['a CA bundle without a webhook', ['--ca-bundle-file', 'ca.crt'], /--ca-bundle-file needs --webhook-service or --webhook-url/],
    ['a CA bundle file that is missing', ['--webhook-url', 'https://h/convert', '--ca-bundle-file', '/nonexistent/ca.crt'], /--ca-bundle-file \/nonexistent\/ca.crt: ENOENT/],
  ])('%s is an error', async (_, flags, message) => {
    const { code, stdout, stderr } = await runCli(['crd', 'generate', fixture('conversionModule.ts'), ...flags]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
  });

  it('a webhook for a module with no converters is an error', async () => {
    const { code, stderr } = await runCli(['crd', 'generate', fixture('plainModule.ts'), '--webhook-url', 'https://h/convert']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/--webhook-service and --webhook-url are for definitions with converters \(a conversion option\), and none of Blog has one/);
  });

  it('crd install refuses the flags with a file of CRDs, before reaching a cluster', async () => {
    const { code, stderr } = await runCli(['crd', 'install', fixture('httpRoute.crd.yaml'), '--webhook-url', 'https://h/convert', '--kubeconfig', join(dir, 'none')]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/httpRoute.crd.yaml: --webhook-service and --webhook-url set the conversion webhook of a module's definitions/);
  });

  it('crd install applies the CRD with its conversion webhook to the server', async () => {
    const server = await startApiServer();
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, server.kubeConfigYaml());
      const { code, stderr } = await runCli(['crd', 'install', fixture('conversionModule.ts'), '--webhook-service', 'web-system/web-webhook', '--kubeconfig', kubeconfig]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const crd = server.get<Crd>('apiextensions.k8s.io/v1/customresourcedefinitions', undefined, 'websites.example.com');
      expect(crd?.spec.conversion?.webhook.clientConfig).toEqual({ service: { namespace: 'web-system', name: 'web-webhook', path: '/convert', port: 443 } });
    } finally {
      await server.close();
    }
  });
});
