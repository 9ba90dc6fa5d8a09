import { describe, expect, it } from 'vitest';
import { assertNodeVersion } from '../src/nodeVersion.js';

describe('the Node.js version check run on import', () => {
  it('names the version it needs on an older Node.js', () => {
    expect(() => assertNodeVersion('20.20.2')).toThrow(/needs Node\.js >= 22\.19\.0; this is Node\.js 20\.20\.2/);
    expect(() => assertNodeVersion('22.18.9')).toThrow(/>= 22\.19\.0/);
  });

  it('accepts what package.json engines allows', async () => {
    for (const v of ['22.19.0', '22.20.1', '23.0.0', '24.11.1', process.versions.node]) expect(() => assertNodeVersion(v)).not.toThrow();
    const pkg = (await import('../package.json', { with: { type: 'json' } })).default as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=22.19.0');
  });
});
