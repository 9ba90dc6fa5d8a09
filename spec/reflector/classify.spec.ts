import { describe, expect, it } from 'vitest';
import { classifyFailure, isTerminalByDefault } from '../../src/reflector/classify.js';
import { errorFromStatus } from '../../src/sources/httpErrors.js';

// The reflector sorts failures with the API error guards; these pin what the one error type must keep
// from the classes it replaced.
describe('classifying API errors', () => {
  it('a throttle is waited out whatever status carries it, with the Retry-After it gave', () => {
    for (const status of [429, 400, 503]) {
      const err = errorFromStatus(status, { reason: 'TooManyRequests' }, { retryAfter: '2' });
      expect(isTerminalByDefault(err), String(status)).toBe(false);
      expect(classifyFailure(err, 'watch'), String(status)).toEqual({ kind: 'throttled', then: 'watch', retryAfterMs: 2000 });
    }
  });

  it('400 and 422 are final; 410, from its status or its reason, relists', () => {
    expect(isTerminalByDefault(errorFromStatus(400, { reason: 'BadRequest' }))).toBe(true);
    expect(isTerminalByDefault(errorFromStatus(422, { reason: 'Invalid' }))).toBe(true);
    expect(classifyFailure(errorFromStatus(410, undefined), 'watch')).toEqual({ kind: 'expired', then: 'list', relist: 'expired' });
    expect(classifyFailure(errorFromStatus(500, { reason: 'Expired' }), 'watch')).toEqual({ kind: 'expired', then: 'list', relist: 'expired' });
    expect(classifyFailure(errorFromStatus(503, undefined), 'watch')).toEqual({ kind: 'server', then: 'list', relist: 'watch-failed' });
  });
});
