import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { admission } from '../../src/admission/index.js';
import { objectClient } from '../../src/index.js';
import { generateCa, issueServing } from '../../src/manager/certificates/generate.js';
import { start, type Running } from '../manager/harness.js';
import { waitFor } from '../helpers/waitFor.js';
import { Website } from './fixtures/conversionModule.js';
import { CliProcess } from './run.js';

// `rxkube simulator --crd <module>` where a definition has converters (WH-144): served with conversion None and
// said so, or converting through --webhook-url.

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
let dir: string;
let cli: CliProcess | undefined;
let manager: Running | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rxkube-simulator-conversion-'));
});
afterEach(async () => {
  await cli?.stop('SIGTERM');
  cli = undefined;
  await manager?.stop();
  manager = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `rxkube simulator` with `flags` until it is ready; resolves a kubeconfig for it. */
async function simulator(flags: readonly string[]): Promise<KubeConfig> {
  const kubeconfig = join(dir, 'kubeconfig');
  cli = new CliProcess(['simulator', '--crd', fixture('conversionModule.ts'), '--kubeconfig-out', kubeconfig, ...flags]);
  await cli.waitFor((out) => out.includes('ready'));
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return kc;
}

const v1Site = { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'shop' }, spec: { image: 'httpd' } };
const CRDS = 'apiextensions.k8s.io/v1/customresourcedefinitions';

describe('rxkube simulator --crd on a definition with converters', () => {
  it('serves it with conversion None without --webhook-url, and says so', async () => {
    const kc = await simulator([]);
    expect(cli?.stdout).toMatch(/ready at http:\/\/127\.0\.0\.1:\d+ with 2 CRDs/);
    expect(cli?.stderr).toContain(
      `rxkube simulator: Website (${fixture('conversionModule.ts')}) has converters; its CRD is served with conversion None, so between versions only apiVersion changes. Pass --webhook-url`,
    );
    expect(cli?.stderr).not.toContain('Blog');
    expect((await objectClient(kc, CRDS).get('websites.example.com')).spec.conversion).toEqual({ strategy: 'None' });
    await objectClient(kc, Website.forVersion('v1'), { namespace: 'default' }).create(v1Site as never);
    expect((await objectClient(kc, Website, { namespace: 'default' }).get('shop')).apiVersion).toBe('example.com/v2');
  });

  it('converts through --webhook-url, trusting --ca-bundle-file', async () => {
    const ca = await generateCa({ commonName: 'webhooks', validityMs: 86_400_000 });
    const pair = await issueServing(ca, { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityMs: 86_400_000 });
    writeFileSync(join(dir, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, 'tls.key'), pair.key);
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    const running = start({ controllers: [], webhooks: [admission.conversion(Website)], webhookBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0', webhookCertDir: dir });
    manager = running;
    const port = await waitFor(() => {
      const e = running.events.find((x) => x.type === 'serving' && x.server === 'webhooks');
      return e?.type === 'serving' && e.port;
    }, 'the webhook server listening');

    const kc = await simulator(['--webhook-url', `https://127.0.0.1:${port}/convert`, '--ca-bundle-file', join(dir, 'ca.crt')]);
    expect(cli?.stderr).toBe('');
    expect((await objectClient(kc, CRDS).get('websites.example.com')).spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(ca.cert).toString('base64') } },
    });
    await objectClient(kc, Website.forVersion('v1'), { namespace: 'default' }).create(v1Site as never);
    expect(await objectClient(kc, Website, { namespace: 'default' }).get('shop')).toMatchObject({ apiVersion: 'example.com/v2', spec: { repository: 'httpd' } });
  });

  it.each([
    ['--ca-bundle-file without --webhook-url', ['--crd', fixture('conversionModule.ts'), '--ca-bundle-file', 'ca.crt'], /error: --ca-bundle-file needs --webhook-url: it is the CA of that webhook/],
    ['--webhook-url with no definition that converts', ['--crd', fixture('plainModule.ts'), '--webhook-url', 'https://127.0.0.1:9443/convert'], /error: --webhook-url is the conversion webhook of definitions with converters .* no module given with --crd exports one/],
    ['an http --webhook-url', ['--crd', fixture('conversionModule.ts'), '--webhook-url', 'http://127.0.0.1:9443/convert'], /error: --crd .*conversionModule\.ts: export Website: crd\(\) threw TypeError: .*conversionWebhook\.url must be an https:\/\/ URL/],
    ['--webhook-service, which a simulator cannot reach', ['--crd', fixture('conversionModule.ts'), '--webhook-service', 'a/b'], /error: unknown option '--webhook-service'/],
  ])('refuses %s', async (_, args, message) => {
    const ended = await new CliProcess(['simulator', ...args]).exited;
    expect(ended.code).toBe(1);
    expect(ended.stdout).toBe('');
    expect(ended.stderr).toMatch(message);
  });
});
