import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TRANSPORT, transportOf, withTransport } from '../../src/transport/options.js';
import { plainHttpAllowed } from '../../src/sources/http.js';

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }, { name: 'u', token: 't' });
  return kc;
}

describe('withTransport', () => {
  it.each([
    ['http2', { http2: 'yes' }, '"yes"'],
    ['compression', { compression: 1 }, '1'],
    ['readIdleTimeoutMs', { readIdleTimeoutMs: 0 }, '0'],
    ['pingTimeoutMs', { pingTimeoutMs: 1.5 }, '1.5'],
    ['pingTimeoutMs', { pingTimeoutMs: -1 }, '-1'],
    ['credentialTimeoutMs', { credentialTimeoutMs: 0 }, '0'],
    ['credentialTimeoutMs', { credentialTimeoutMs: 2 ** 31 }, '2147483648'],
  ])('rejects a bad %s up front with a TypeError naming it and the value', (name, options, value) => {
    const call = (): unknown => withTransport(kubeConfig(), options as never);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(new RegExp(`^${name}: .*${value.replace('.', '\\.')}$`));
  });

  it('rejects what is not a KubeConfig or not an options object', () => {
    expect(() => withTransport({} as never, {})).toThrow(/^kc: /);
    expect(() => withTransport(kubeConfig(), null as never)).toThrow(/^options: /);
  });

  it('carries its options through later views, keeps earlier ones unless overridden, and leaves kc alone', () => {
    const kc = kubeConfig();
    const a = withTransport(kc, { http2: false });
    const b = withTransport(a, { pingTimeoutMs: 2_000 });
    expect(transportOf(kc)).toEqual(DEFAULT_TRANSPORT);
    expect(transportOf(a)).toEqual({ ...DEFAULT_TRANSPORT, http2: false });
    expect(transportOf(b)).toEqual({ ...DEFAULT_TRANSPORT, http2: false, pingTimeoutMs: 2_000 });
    // rxkube's own views (plain http allowed) keep them.
    expect(transportOf(plainHttpAllowed(b))).toEqual(transportOf(b));
    // Clusters and users still come from kc, changes included.
    kc.users[0] = { name: 'u', token: 'rotated' };
    expect(b.getCurrentUser()?.token).toBe('rotated');
  });
});
