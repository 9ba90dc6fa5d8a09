import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admission, customResource } from '../../src/index.js';
import { isWebhook } from '../../src/core.js';

const Website = customResource({
  group: 'example.com',
  kind: 'Website',
  versions: { v1: { spec: z.object({ image: z.string() }) }, v2beta1: { spec: z.object({ image: z.string() }), storage: true } },
});
const ok = () => admission.allow();

describe('webhook paths and names', () => {
  it("follow controller-runtime's generateValidatePath / generateMutatePath", () => {
    expect(admission.validating('v1/pods', ok).path).toBe('/validate--v1-pod');
    expect(admission.mutating('v1/pods', ({ object }) => object).path).toBe('/mutate--v1-pod');
    expect(admission.validating('apps/v1/deployments', ok).path).toBe('/validate-apps-v1-deployment');
    expect(admission.validating('networking.k8s.io/v1/ingresses', ok).path).toBe('/validate-networking-k8s-io-v1-ingress');
    expect(admission.validating(Website, ok).path).toBe('/validate-example-com-v2beta1-website');
    expect(admission.validating(Website.forVersion('v1'), ok).path).toBe('/validate-example-com-v1-website');
  });

  it('default names are domains of three labels', () => {
    expect(admission.validating(Website, ok).name).toBe('vwebsite.example.com');
    expect(admission.mutating('apps/v1/deployments', ({ object }) => object).name).toBe('mdeployment.apps.k8s.io');
    expect(admission.validating('v1/pods', ok).name).toBe('vpod.core.k8s.io');
    expect(admission.validating('rbac.authorization.k8s.io/v1/roles', ok).name).toBe('vrole.rbac.authorization.k8s.io');
  });

  it('options take their defaults and a path or name given', () => {
    const hook = admission.validating(Website, ok, { path: '/v/websites', name: 'websites.shop.example.com' });
    expect(hook.path).toBe('/v/websites');
    expect(hook.options).toEqual({ path: '/v/websites', name: 'websites.shop.example.com', operations: ['CREATE', 'UPDATE'], failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 10, matchPolicy: 'Equivalent' });
    expect(admission.mutating(Website, ({ object }) => object).options.reinvocationPolicy).toBe('Never');
    expect(isWebhook(hook)).toBe(true);
    expect(isWebhook({ type: 'validating', path: '/x' })).toBe(false);
  });
});

describe('options are checked up front, naming the option', () => {
  const cases: [string, unknown, RegExp][] = [
    ['path without a slash', { path: 'validate' }, /option "path" must start with '\/'/],
    ['path with an empty segment', { path: '/a//b' }, /option "path" segment ""/],
    ['path in upper case', { path: '/Validate' }, /option "path"/],
    ['path with a segment kube-apiserver refuses', { path: '/a..b' }, /option "path" segment "a\.\.b" must be a DNS subdomain/],
    ['path with a trailing slash', { path: '/validate/' }, /option "path"/],
    ['no operations', { operations: [] }, /option "operations"/],
    ['an unknown operation', { operations: ['PATCH'] }, /option "operations"/],
    ["'*' with others", { operations: ['*', 'CREATE'] }, /'\*' alone/],
    ['failurePolicy', { failurePolicy: 'fail' }, /option "failurePolicy" must be one of "Fail", "Ignore"/],
    ['sideEffects', { sideEffects: 'Some' }, /option "sideEffects"/],
    ['timeoutSeconds 0', { timeoutSeconds: 0 }, /option "timeoutSeconds"/],
    ['timeoutSeconds 31', { timeoutSeconds: 31 }, /option "timeoutSeconds" must be at most 30/],
    ['timeoutSeconds 1.5', { timeoutSeconds: 1.5 }, /option "timeoutSeconds"/],
    ['matchPolicy', { matchPolicy: 'exact' }, /option "matchPolicy"/],
    ['reinvocationPolicy on validating', { reinvocationPolicy: 'IfNeeded' }, /option "reinvocationPolicy" is for mutating webhooks only/],
    ['a two-label name', { name: 'vwebsite.example' }, /option "name"/],
    ['a bad selector', { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Has' }] } }, /option "namespaceSelector" is not a label selector/],
    ['a misspelt selector', { objectSelector: { matchLabel: { a: 'b' } } }, /option "objectSelector"/],
    ['a misspelt option', { timeout: 3 }, /unknown option "timeout"/],
  ];
  for (const [label, opts, message] of cases) {
    it(label, () => expect(() => admission.validating('v1/pods', ok, opts as never)).toThrow(message));
  }

  it('a mutating reinvocationPolicy is checked too', () => {
    expect(() => admission.mutating('v1/pods', ({ object }) => object, { reinvocationPolicy: 'Always' as never })).toThrow(/option "reinvocationPolicy"/);
  });

  it('the resource and handler are checked', () => {
    expect(() => admission.validating('pods' as never, ok)).toThrow(/resource must be a built-in resource name/);
    expect(() => admission.validating('example.com/v1/widgets' as never, ok)).toThrow(/customResource definition/);
    expect(() => admission.validating('v1/pods', undefined as never)).toThrow(/handler must be a function/);
  });

  it('allow and deny check theirs', () => {
    expect(() => admission.deny('')).toThrow(/message must be a non-empty string/);
    expect(() => admission.deny('no', { code: 200 })).toThrow(/option "code" must be an integer HTTP status 400…599/);
    expect(() => admission.deny('no', { field: '' })).toThrow(/option "field"/);
    expect(() => admission.allow({ warnings: 'w' as never })).toThrow(/option "warnings"/);
    expect(() => admission.allow({ warning: [] } as never)).toThrow(/unknown option "warning"/);
    expect(Object.isFrozen(admission.deny('no', { field: 'spec' }).status?.details?.causes?.[0])).toBe(true);
  });
});
