import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { customResource } from '../../src/index.js';
import { Website } from '../admission/websiteVersions.js';

const versions = {
  v1: { spec: z.object({ image: z.string() }) },
  v2: { spec: z.object({ image: z.string() }), storage: true },
  v3: { spec: z.object({ image: z.string() }) },
} as const;
const pass = (o: object): never => o as never;
const pair = { toStorage: pass, fromStorage: pass };
const make = (conversion: unknown): unknown => customResource({ group: 'example.com', kind: 'Site', versions, conversion } as never);

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ==\n-----END CERTIFICATE-----\n';

describe('customResource conversion', () => {
  it('takes converters for every version but the storage version', () => {
    const def = customResource({ group: 'example.com', kind: 'Site', versions, conversion: { v1: pair, v3: pair } });
    expect(def.hasConversion).toBe(true);
    expect(def.forVersion('v1').hasConversion).toBe(true);
    expect(customResource({ group: 'example.com', kind: 'Site', versions }).hasConversion).toBe(false);
  });

  it.each([
    ['a missing version', { v1: pair }, /customResource: conversion.v3 is missing: every version but the storage version v2 needs \{ toStorage, fromStorage \}/],
    ['the storage version', { v1: pair, v2: pair, v3: pair }, /customResource: conversion.v2: v2 is the storage version, which every conversion goes through; it takes no converters \(give \{ v1: \{ toStorage, fromStorage \}, v3: \{ toStorage, fromStorage \} \}\)/],
    ['a version that does not exist', { v1: pair, v3: pair, v4: pair }, /customResource: conversion.v4: no version of that name; the versions are v1, v2, v3/],
    ['a converter that is not a function', { v1: { toStorage: pass, fromStorage: 'x' }, v3: pair }, /customResource: conversion.v1.fromStorage must be a function, got "x"/],
    ['a missing converter', { v1: { toStorage: pass }, v3: pair }, /customResource: conversion.v1.fromStorage must be a function, got undefined/],
    ['an unknown key in an entry', { v1: { ...pair, toHub: pass }, v3: pair }, /customResource: conversion.v1: unknown option "toHub"/],
    ['an entry that is not an object', { v1: 1, v3: pair }, /customResource: conversion.v1: options must be an object, got 1/],
    ['something else', 'converters', /customResource: conversion must be an object of converters by version, \{ v1: \{ toStorage, fromStorage \}, v3: \{ toStorage, fromStorage \} \}, got "converters"/],
  ])('refuses %s with a TypeError naming the option', (_, conversion, message) => {
    expect(() => make(conversion)).toThrow(TypeError);
    expect(() => make(conversion)).toThrow(message);
  });

  it('refuses conversion on a definition of one version', () => {
    expect(() => customResource({ group: 'example.com', version: 'v1', kind: 'Site', spec: z.object({}), conversion: {} } as never)).toThrow(/customResource: unknown option "conversion"/);
    expect(() => customResource({ group: 'example.com', kind: 'Site', versions: { v1: { spec: z.object({}), storage: true } }, conversion: {} })).toThrow(
      /conversion needs a version besides the storage version v1/,
    );
  });

  it('leaves validate() and forVersion() of each version as they are', () => {
    expect(Website.version).toBe('v2');
    expect(Website.forVersion('v1').validate({ apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'a' }, spec: { image: 'nginx' } })).toEqual({
      value: { apiVersion: 'example.com/v1', kind: 'Website', metadata: { name: 'a' }, spec: { image: 'nginx', replicas: 1 } },
    });
    expect(Website.validate({ apiVersion: 'example.com/v2', kind: 'Website', spec: { repository: 'nginx' } }).issues?.map((i) => i.path)).toEqual(['spec.tag', 'spec.replicas']);
  });
});

describe('crd() of a definition with conversion', () => {
  it('points spec.conversion at a Service, at /convert on 443 unless given', () => {
    const crd = Website.crd({ conversionWebhook: { service: { namespace: 'web-system', name: 'web-webhook' } } });
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'web-system', name: 'web-webhook', path: '/convert', port: 443 } } },
    });
    expect(Object.isFrozen(crd.spec.conversion?.webhook.clientConfig)).toBe(true);
    const other = Website.crd({ conversionWebhook: { service: { namespace: 'a', name: 'b', port: 9443, path: '/convert-websites' } } });
    expect(other.spec.conversion?.webhook.clientConfig.service).toEqual({ namespace: 'a', name: 'b', port: 9443, path: '/convert-websites' });
  });

  it('points it at a URL, with the CA bundle base64-encoded, and keeps the rest of the CRD', () => {
    const crd = Website.crd({ conversionWebhook: { url: 'https://127.0.0.1:9443/convert' }, caBundle: PEM });
    expect(crd.spec.conversion?.webhook.clientConfig).toEqual({ url: 'https://127.0.0.1:9443/convert', caBundle: Buffer.from(PEM).toString('base64') });
    const { conversion: _, ...rest } = crd.spec;
    expect(rest.versions.map((v) => [v.name, v.storage])).toEqual([
      ['v1', false],
      ['v2', true],
      ['v3', false],
    ]);
    expect(Website.forVersion('v3').crd({ conversionWebhook: { url: 'https://h/convert' } }).metadata.name).toBe('websites.example.com');
  });

  it.each([
    ['no argument', undefined, /Website.crd: Website has converters \(its conversion option\), so its CRD needs options.conversionWebhook/],
    ['no conversionWebhook', {}, /Website.crd: conversionWebhook is required/],
    ['an unknown option', { conversionWebhook: { url: 'https://h/' }, ca: PEM }, /Website.crd: unknown option "ca"/],
    ['both service and url', { conversionWebhook: { url: 'https://h/', service: { namespace: 'a', name: 'b' } } }, /conversionWebhook must have exactly one of service and url/],
    ['an http URL', { conversionWebhook: { url: 'http://h/convert' } }, /conversionWebhook.url must be an https:\/\/ URL, got "http:\/\/h\/convert"/],
    ['a URL with a query', { conversionWebhook: { url: 'https://h/convert?x=1' } }, /conversionWebhook.url must have no user info, query or fragment/],
    ['a URL with user info', { conversionWebhook: { url: 'https://u:p@h/convert' } }, /conversionWebhook.url must have no user info/],
    ['a URL that is not one', { conversionWebhook: { url: 'not a url' } }, /conversionWebhook.url must be an https:\/\/ URL/],
    ['a namespace that is not a name', { conversionWebhook: { service: { namespace: 'Web', name: 'b' } } }, /conversionWebhook.service.namespace must be a namespace name \(a DNS-1123 label\), got "Web"/],
    ['a missing Service name', { conversionWebhook: { service: { namespace: 'a' } } }, /conversionWebhook.service.name must be a Service's name/],
    ['a port out of range', { conversionWebhook: { service: { namespace: 'a', name: 'b', port: 70000 } } }, /conversionWebhook.service.port must be an integer 1…65535, got 70000/],
    ['a path without a slash', { conversionWebhook: { service: { namespace: 'a', name: 'b', path: 'convert' } } }, /conversionWebhook.service.path must start with '\/'/],
    ['a path segment kube-apiserver refuses', { conversionWebhook: { service: { namespace: 'a', name: 'b', path: '/Convert/v1' } } }, /conversionWebhook.service.path segment "Convert" must be a DNS subdomain/],
    ['a path with an empty segment', { conversionWebhook: { service: { namespace: 'a', name: 'b', path: '/convert//x' } } }, /conversionWebhook.service.path segment "" must be a DNS subdomain/],
    ['a CA bundle that is not PEM', { conversionWebhook: { url: 'https://h/' }, caBundle: 'LS0tLS1CRUdJTg==' }, /caBundle must be PEM text of one or more certificates/],
  ])('refuses %s with a TypeError naming the option', (_, options, message) => {
    const call = (): unknown => (Website.crd as (o?: unknown) => unknown)(options);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(message);
  });
});

describe('crd() of a definition without conversion', () => {
  const Plain = customResource({ group: 'example.com', kind: 'Site', versions });

  it('stays strategy None (no spec.conversion), the same object every call', () => {
    expect(Plain.crd().spec.conversion).toBeUndefined();
    expect(Plain.crd()).toBe(Plain.crd());
  });

  it('refuses a webhook with a TypeError naming the option', () => {
    const call = (): unknown => (Plain.crd as (o?: unknown) => unknown)({ conversionWebhook: { url: 'https://h/convert' } });
    expect(call).toThrow(TypeError);
    expect(call).toThrow(/Site.crd: Site has no conversion option, so its CRD has no conversion webhook; call crd\(\) with no argument/);
  });
});
