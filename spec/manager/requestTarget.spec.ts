/** The request-targets the runner's servers accept (RFC 9112's origin- and absolute-form) and the ones they answer 400. */
import { describe, expect, it } from 'vitest';
import { parseRequestTarget } from '../../src/manager/requestTarget.js';

const read = (target: string): { path: string; query: string } | undefined => {
  const t = parseRequestTarget(target);
  return t === undefined ? undefined : { path: t.path, query: t.query.toString() };
};

describe('parseRequestTarget', () => {
  it('reads origin-form and absolute-form targets', () => {
    expect(read('/healthz')).toEqual({ path: '/healthz', query: '' });
    expect(read('/readyz?verbose')).toEqual({ path: '/readyz', query: 'verbose=' });
    expect(read('http://10.0.0.7:8081/livez?verbose=1')).toEqual({ path: '/livez', query: 'verbose=1' });
    expect(read('HTTP://[::1]:8081')).toEqual({ path: '/', query: '' });
    expect(read('http://host?verbose')).toEqual({ path: '/', query: 'verbose=' });
    // A path of empty segments is a path (RFC 9112), not a host: served nowhere, so a 404, never a throw.
    expect(read('//x:99999/')).toEqual({ path: '//x:99999/', query: '' });
    expect(read('/%41')).toEqual({ path: '/%41', query: '' });
  });

  it('refuses what is no origin-form or absolute-form target, without throwing', () => {
    for (const target of ['//[', 'http://[', 'http://x:99999/', '*', 'healthz', '/a b', '/%zz', '/x#y', 'ftp://a/', '', '/\u0000', '/\u00e9', 'http://a/\u0001', '/?%']) {
      expect(read(target), JSON.stringify(target)).toBeUndefined();
    }
  });
});
