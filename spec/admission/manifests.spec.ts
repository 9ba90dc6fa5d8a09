import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admission, customResource, webhookManifests, type Webhook } from '../../src/index.js';

const Website = customResource({ group: 'example.com', version: 'v1', kind: 'Website', spec: z.object({ image: z.string() }) });
const validateWebsite = admission.validating(Website, () => admission.allow());
const defaultWebsite = admission.mutating(Website, ({ object }) => object, { reinvocationPolicy: 'IfNeeded', objectSelector: { matchLabels: { managed: 'yes' } } });
const pods = admission.validating('v1/pods', () => admission.allow(), { operations: ['*'], failurePolicy: 'Ignore', timeoutSeconds: 3, namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } });
const nodes = admission.validating('v1/nodes', () => admission.allow(), { sideEffects: 'NoneOnDryRun', matchPolicy: 'Exact' });
const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

// kube-apiserver's checks of a webhook entry (ValidateValidatingWebhookConfiguration / ...Mutating..., admissionregistration v1).
function apiserverProblems(config: any): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const w of config.webhooks as any[]) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$/.test(w.name)) problems.push(`name ${w.name} is not fully qualified`);
    if (names.has(w.name)) problems.push(`duplicate name ${w.name}`);
    names.add(w.name);
    if (!Array.isArray(w.admissionReviewVersions) || !w.admissionReviewVersions.includes('v1')) problems.push('admissionReviewVersions');
    if (!['None', 'NoneOnDryRun'].includes(w.sideEffects)) problems.push('sideEffects');
    if (!['Fail', 'Ignore'].includes(w.failurePolicy)) problems.push('failurePolicy');
    if (!['Exact', 'Equivalent'].includes(w.matchPolicy)) problems.push('matchPolicy');
    if (!(w.timeoutSeconds >= 1 && w.timeoutSeconds <= 30)) problems.push('timeoutSeconds');
    if (config.kind === 'MutatingWebhookConfiguration' && !['Never', 'IfNeeded'].includes(w.reinvocationPolicy)) problems.push('reinvocationPolicy');
    if (config.kind === 'ValidatingWebhookConfiguration' && 'reinvocationPolicy' in w) problems.push('reinvocationPolicy on validating');
    const c = w.clientConfig;
    if (('url' in c) === ('service' in c)) problems.push('clientConfig needs exactly one of url and service');
    if ('url' in c && !/^https:\/\/[^/?#@]+\/[^?#]*$/.test(c.url)) problems.push(`url ${c.url}`);
    if ('service' in c && (!c.service.path.startsWith('/') || !(c.service.port >= 1 && c.service.port <= 65535))) problems.push('service');
    for (const r of w.rules as any[]) {
      for (const list of ['operations', 'apiGroups', 'apiVersions', 'resources'] as const) {
        if (!Array.isArray(r[list]) || r[list].length === 0) problems.push(`rules.${list} empty`);
        if (r[list].includes('*') && r[list].length > 1) problems.push(`rules.${list}: '*' not alone`);
      }
      if (!['Namespaced', 'Cluster', '*'].includes(r.scope)) problems.push('scope');
    }
  }
  return problems;
}

describe('webhookManifests', () => {
  it('gives one validating and one mutating configuration, one entry per webhook, with rules from the resource', () => {
    const [validating, mutating, ...rest] = webhookManifests({
      name: 'shop-operator',
      webhooks: [validateWebsite, defaultWebsite, pods, nodes],
      clientConfig: { service: { namespace: 'shop-system', name: 'shop-operator-webhooks' } },
      caBundle: pem,
    }) as any[];
    expect(rest).toEqual([]);
    const caBundle = Buffer.from(pem).toString('base64');
    expect(validating).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'shop-operator' },
      webhooks: [
        {
          name: 'vwebsite.example.com',
          admissionReviewVersions: ['v1'],
          clientConfig: { service: { namespace: 'shop-system', name: 'shop-operator-webhooks', port: 443, path: '/validate-example-com-v1-website' }, caBundle },
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['websites'], scope: 'Namespaced' }],
          failurePolicy: 'Fail',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          timeoutSeconds: 10,
        },
        {
          name: 'vpod.core.k8s.io',
          admissionReviewVersions: ['v1'],
          clientConfig: { service: { namespace: 'shop-system', name: 'shop-operator-webhooks', port: 443, path: '/validate--v1-pod' }, caBundle },
          rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
          failurePolicy: 'Ignore',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          timeoutSeconds: 3,
          namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
        },
        {
          name: 'vnode.core.k8s.io',
          admissionReviewVersions: ['v1'],
          clientConfig: { service: { namespace: 'shop-system', name: 'shop-operator-webhooks', port: 443, path: '/validate--v1-node' }, caBundle },
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'], scope: 'Cluster' }],
          failurePolicy: 'Fail',
          matchPolicy: 'Exact',
          sideEffects: 'NoneOnDryRun',
          timeoutSeconds: 10,
        },
      ],
    });
    expect(mutating).toMatchObject({
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'shop-operator' },
      webhooks: [{ name: 'mwebsite.example.com', reinvocationPolicy: 'IfNeeded', objectSelector: { matchLabels: { managed: 'yes' } }, clientConfig: { service: { path: '/mutate-example-com-v1-website' } } }],
    });
    expect(apiserverProblems(validating)).toEqual([]);
    expect(apiserverProblems(mutating)).toEqual([]);
    expect(Object.isFrozen(validating.webhooks[0].rules[0])).toBe(true);
  });

  it('gives the CRDs of customResources first; one that converts gets the path of the conversion webhook converting it', () => {
    const seen: unknown[] = [];
    const Shop = {
      group: 'example.com',
      kind: 'Shop',
      hasConversion: true,
      crd: (o?: unknown) => {
        seen.push(o);
        return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'shops.example.com' } };
      },
    };
    // A conversion webhook by shape (another copy of rxkube may have made it), serving Shop at its own path.
    const convertShop = { type: 'conversion', path: '/convert-shops', converts: [{ group: 'example.com', kind: 'Shop' }], review: async () => ({ status: 400, body: '' }) } as Webhook;
    const out = webhookManifests({
      name: 'shop',
      webhooks: [validateWebsite, convertShop],
      customResources: [Website, Shop as never],
      clientConfig: { service: { namespace: 'shop-system', name: 'hooks', port: 9443 } },
      caBundle: pem,
    }) as any[];
    expect(out.map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'CustomResourceDefinition', 'ValidatingWebhookConfiguration']);
    expect(out[0]).toEqual(Website.crd());
    expect(seen).toEqual([{ conversionWebhook: { service: { namespace: 'shop-system', name: 'hooks', port: 9443, path: '/convert-shops' } }, caBundle: pem }]);
    webhookManifests({ name: 'shop', webhooks: [convertShop], customResources: [Shop as never], clientConfig: { url: 'https://h:1/' } });
    expect(seen[1]).toEqual({ conversionWebhook: { url: 'https://h:1/convert-shops' } });
    expect(() => webhookManifests({ name: 'shop', webhooks: [], customResources: [{} as never], clientConfig: { url: 'https://h' } })).toThrow(/customResources\[0\] is not a customResource definition/);
  });

  const Shop = customResource({
    group: 'example.com',
    kind: 'Shop',
    versions: { v1: { spec: z.object({ owner: z.string() }) }, v2: { spec: z.object({ owners: z.array(z.string()) }), storage: true } },
    conversion: {
      v1: {
        toStorage: ({ metadata, spec }) => ({ apiVersion: 'example.com/v2', kind: 'Shop', metadata, spec: { owners: [spec.owner] } }),
        fromStorage: ({ metadata, spec }) => ({ apiVersion: 'example.com/v1', kind: 'Shop', metadata, spec: { owner: spec.owners[0] ?? '' } }),
      },
    },
  });

  it("points a converting CRD at the path its conversion webhook serves, whatever that path is", () => {
    const out = webhookManifests({ name: 'shop', webhooks: [admission.conversion(Shop, { path: '/convert/shops' })], customResources: [Shop], clientConfig: { url: 'https://h:1' } }) as any[];
    expect(out).toHaveLength(1);
    expect(out[0].spec.conversion.webhook.clientConfig).toEqual({ url: 'https://h:1/convert/shops' });
  });

  it('refuses a converting definition that no conversion webhook in webhooks converts, naming it', () => {
    const other = customResource({
      group: 'other.example.com',
      kind: 'Shop',
      versions: { v1: { spec: z.object({ a: z.string() }) }, v2: { spec: z.object({ a: z.string() }), storage: true } },
      conversion: { v1: { toStorage: (o) => ({ ...o, apiVersion: 'other.example.com/v2' }), fromStorage: (o) => ({ ...o, apiVersion: 'other.example.com/v1' }) } },
    });
    expect(() => webhookManifests({ name: 'shop', webhooks: [validateWebsite], customResources: [Website, Shop], clientConfig: { url: 'https://h' } })).toThrow(
      /customResources\[1\] \(Shop\) converts between versions, and no conversion webhook in option "webhooks" converts it/,
    );
    // A webhook converting another group's Shop is not one for this Shop.
    expect(() => webhookManifests({ name: 'shop', webhooks: [admission.conversion(other)], customResources: [Shop], clientConfig: { url: 'https://h' } })).toThrow(/customResources\[0\] \(Shop\)/);
    expect(admission.conversion(Shop).converts).toEqual([{ group: 'example.com', kind: 'Shop' }]);
  });

  it('gives one CRD for two views of one definition', () => {
    const out = webhookManifests({ name: 'shop', webhooks: [admission.conversion(Shop)], customResources: [Shop, Shop.forVersion('v1'), Website, Website], clientConfig: { url: 'https://h' } }) as any[];
    expect(out.map((o) => o.metadata.name)).toEqual(['shops.example.com', 'websites.example.com']);
  });

  it('a url client config gets the path appended', () => {
    const [config] = webhookManifests({ name: 'e2e', webhooks: [validateWebsite], clientConfig: { url: 'https://127.0.0.1:9443/' } }) as any[];
    expect(config.webhooks[0].clientConfig).toEqual({ url: 'https://127.0.0.1:9443/validate-example-com-v1-website' });
    expect(apiserverProblems(config)).toEqual([]);
  });

  it('leaves conversion webhooks and empty configurations out', () => {
    const conversion: Webhook = { type: 'conversion', path: '/convert', review: async () => ({ status: 400, body: '' }) };
    const out = webhookManifests({ name: 'x', webhooks: [conversion, defaultWebsite], clientConfig: { url: 'https://h' } }) as any[];
    expect(out.map((c) => c.kind)).toEqual(['MutatingWebhookConfiguration']);
  });

  it('refuses what kube-apiserver would, naming the option', () => {
    const base = { name: 'x', webhooks: [validateWebsite], clientConfig: { url: 'https://h' } };
    const bad: [object, RegExp][] = [
      [{ ...base, name: 'Bad_Name' }, /option "name"/],
      [{ ...base, clientConfig: { url: 'http://h' } }, /option "clientConfig.url"/],
      [{ ...base, clientConfig: { url: 'https://h/?q=1' } }, /option "clientConfig.url"/],
      [{ ...base, clientConfig: { url: 'https://u:p@h' } }, /option "clientConfig.url"/],
      [{ ...base, clientConfig: {} }, /exactly one of service and url/],
      [{ ...base, clientConfig: { url: 'https://h', service: { namespace: 'a', name: 'b' } } }, /exactly one of service and url/],
      [{ ...base, clientConfig: { service: { namespace: 'A', name: 'b' } } }, /clientConfig.service.namespace/],
      [{ ...base, clientConfig: { service: { namespace: 'a', name: 'b', port: 70000 } } }, /clientConfig.service.port/],
      [{ ...base, caBundle: 'not pem' }, /option "caBundle"/],
      [{ ...base, webhooks: [{}] }, /webhooks\[0\] is not a webhook/],
      [{ ...base, webhooks: [validateWebsite, admission.validating(Website, () => admission.allow(), { path: '/other' })] }, /two validating webhooks are named "vwebsite.example.com"/],
      [{ ...base, webhooks: [validateWebsite, admission.validating('v1/pods', () => admission.allow(), { path: validateWebsite.path })] }, /two webhooks have the path/],
      [{ ...base, webhooks: [{ type: 'validating', path: '/v', review: async () => ({ status: 200, body: {} }) }] }, /without the name, resource and options/],
      [{ ...base, extra: 1 }, /unknown option "extra"/],
    ];
    for (const [opts, message] of bad) expect(() => webhookManifests(opts as never), JSON.stringify(opts)).toThrow(message);
  });
});
