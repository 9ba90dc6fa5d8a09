import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  isExpired,
  isForbidden,
  isNotFound,
  isServerError,
  isTooManyRequests,
  isUnauthorized,
  KubeApiError,
} from '../../src/errors/api/index.js';
import { connectionErrorFrom, errorFromStatus, isTooLargeResourceVersion } from '../../src/sources/httpErrors.js';

describe('errorFromStatus', () => {
  it('maps status and reason to the typed errors', () => {
    expect(isExpired(errorFromStatus(410, { reason: 'Expired' }))).toBe(true);
    expect(isExpired(errorFromStatus(410, undefined))).toBe(true);
    expect(isExpired(errorFromStatus(500, { reason: 'Gone', code: 410 }))).toBe(true);
    expect(isUnauthorized(errorFromStatus(401, { reason: 'Unauthorized' }))).toBe(true);
    expect(isForbidden(errorFromStatus(403, { reason: 'Forbidden' }))).toBe(true);
    expect(isNotFound(errorFromStatus(404, { reason: 'NotFound' }))).toBe(true);
    expect(isServerError(errorFromStatus(503, undefined))).toBe(true);
    for (const status of [400, 409, 422]) {
      const err = errorFromStatus(status, { reason: 'BadRequest', message: 'nope' });
      expect(err.constructor).toBe(KubeApiError);
      expect(err.status).toBe(status);
    }
  });

  it('carries status, reason, server message and the Status, and names the request', () => {
    const status = { kind: 'Status', message: 'pods is forbidden', reason: 'Forbidden', code: 403 };
    const err = errorFromStatus(403, status, { what: 'list v1/pods' });
    expect(err.status).toBe(403);
    expect(err.reason).toBe('Forbidden');
    expect(err.serverMessage).toBe('pods is forbidden');
    // A copy of the Status fields, each escaped and bounded (HI-79): equal for a Status with nothing to escape.
    expect(err.details).toEqual(status);
    expect(err.message).toBe('list v1/pods: 403 Forbidden: pods is forbidden');
  });

  it('reads Retry-After from the header (seconds or date) before the Status details', () => {
    const fromHeader = errorFromStatus(429, { details: { retryAfterSeconds: 9 } }, { retryAfter: '3' });
    expect(isTooManyRequests(fromHeader)).toBe(true);
    expect(fromHeader.retryAfterSeconds).toBe(3);
    expect(errorFromStatus(429, { details: { retryAfterSeconds: 9 } }).retryAfterSeconds).toBe(9);
    const date = new Date(Date.now() + 60_000).toUTCString();
    const fromDate = errorFromStatus(429, undefined, { retryAfter: date }).retryAfterSeconds;
    expect(fromDate).toBeGreaterThan(50);
    expect(fromDate).toBeLessThanOrEqual(61);
    expect(errorFromStatus(429, undefined).retryAfterSeconds).toBeUndefined();
  });
});

describe('isTooLargeResourceVersion', () => {
  it('recognises the StatusCause and the message, and nothing else', () => {
    expect(isTooLargeResourceVersion(errorFromStatus(504, { reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] } }))).toBe(true);
    expect(isTooLargeResourceVersion(errorFromStatus(504, { reason: 'Timeout', message: 'Too large resource version: 20, current: 10' }))).toBe(true);
    expect(isTooLargeResourceVersion(errorFromStatus(410, { reason: 'Expired', message: 'too old resource version' }))).toBe(false);
    expect(isTooLargeResourceVersion(new Error('Too large resource version'))).toBe(false);
    expect(isTooLargeResourceVersion(undefined)).toBe(false);
  });
});

describe('connectionErrorFrom', () => {
  it('finds the system code on the error, its cause or an AggregateError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(connectionErrorFrom(refused, 'list v1/pods').code).toBe('ECONNREFUSED');
    const wrapped = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('getaddrinfo ENOTFOUND nope'), { code: 'ENOTFOUND' }) });
    expect(connectionErrorFrom(wrapped, 'x').code).toBe('ENOTFOUND');
    const agg = new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })], 'all failed');
    expect(connectionErrorFrom(agg, 'x').code).toBe('ECONNREFUSED');
    const undiciSocket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(connectionErrorFrom(undiciSocket, 'x').code).toBe('ECONNRESET');
    expect(connectionErrorFrom(new Error('socket hang up'), 'x').code).toBe('ECONNRESET');
    const tls = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(connectionErrorFrom(tls, 'x').code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('returns a ConnectionError unchanged and scrubs proxy credentials from messages', () => {
    const own = new ConnectionError('idle', { code: 'IDLE_TIMEOUT' });
    expect(connectionErrorFrom(own, 'x')).toBe(own);
    const err = connectionErrorFrom(new Error('proxy http://alice:s3cret@proxy:3128 refused'), 'watch v1/pods');
    expect(err.message).not.toContain('s3cret');
    expect(err.message).toContain('watch v1/pods');
  });
});
