import { describe, expect, expectTypeOf, it } from 'vitest';
import * as root from '../../../src/index.js';
import {
  ConnectionError,
  DecodeError,
  isAlreadyExists,
  isConflict,
  isExpired,
  isForbidden,
  isInvalid,
  isNotFound,
  isServerError,
  isTooManyRequests,
  isUnauthorized,
  KubeApiError,
} from '../../../src/errors/api/index.js';
import { errorFromStatus } from '../../../src/sources/httpErrors.js';

const GUARDS = { isNotFound, isConflict, isAlreadyExists, isExpired, isTooManyRequests, isUnauthorized, isForbidden, isInvalid, isServerError };

/** The guards that hold for one server answer, by name. */
const holding = (err: unknown): string[] => Object.entries(GUARDS).filter(([, guard]) => guard(err)).map(([name]) => name);

describe('API error guards', () => {
  it('tell each server answer apart by status, as client-go does', () => {
    expect(holding(errorFromStatus(404, { reason: 'NotFound' }))).toEqual(['isNotFound']);
    expect(holding(errorFromStatus(409, { reason: 'Conflict' }))).toEqual(['isConflict']);
    expect(holding(errorFromStatus(409, undefined))).toEqual(['isConflict']);
    expect(holding(errorFromStatus(409, { reason: 'AlreadyExists' }))).toEqual(['isAlreadyExists']);
    expect(holding(errorFromStatus(410, { reason: 'Expired' }))).toEqual(['isExpired']);
    expect(holding(errorFromStatus(410, undefined))).toEqual(['isExpired']);
    expect(holding(errorFromStatus(429, undefined))).toEqual(['isTooManyRequests']);
    expect(holding(errorFromStatus(401, undefined))).toEqual(['isUnauthorized']);
    expect(holding(errorFromStatus(403, undefined))).toEqual(['isForbidden']);
    expect(holding(errorFromStatus(422, { reason: 'Invalid' }))).toEqual(['isInvalid']);
    for (const status of [500, 503, 504, 599]) expect(holding(errorFromStatus(status, undefined)), String(status)).toEqual(['isServerError']);
    expect(holding(errorFromStatus(400, { reason: 'BadRequest' }))).toEqual([]);
    expect(holding(errorFromStatus(600, undefined))).toEqual([]);
  });

  it('also accept the Status reason alone, as a watch ERROR event or a proxy may give it', () => {
    expect(isExpired(errorFromStatus(500, { reason: 'Gone' }))).toBe(true);
    expect(isExpired(errorFromStatus(500, { reason: 'Expired' }))).toBe(true);
    expect(isTooManyRequests(errorFromStatus(500, { reason: 'TooManyRequests' }))).toBe(true);
    expect(isNotFound(errorFromStatus(500, { reason: 'NotFound' }))).toBe(true);
    expect(isForbidden(errorFromStatus(500, { reason: 'Forbidden' }))).toBe(true);
    expect(isUnauthorized(errorFromStatus(500, { reason: 'Unauthorized' }))).toBe(true);
    expect(isInvalid(errorFromStatus(500, { reason: 'Invalid' }))).toBe(true);
    // A 409 that is not a write conflict is no conflict.
    expect(isConflict(errorFromStatus(409, { reason: 'AlreadyExists' }))).toBe(false);
  });

  it('accept anything and hold only for a KubeApiError, not for its cause', () => {
    for (const value of [undefined, null, 404, 'NotFound', { status: 404, reason: 'NotFound' }, new Error('404 NotFound'), new DecodeError('bad', '{', 0), new ConnectionError('refused', { code: 'ECONNREFUSED' })]) {
      expect(holding(value)).toEqual([]);
    }
    expect(isNotFound(new Error('wrapped', { cause: new KubeApiError(404, 'gone') }))).toBe(false);
  });

  it('every API answer is exactly a KubeApiError: no class per status', () => {
    for (const status of [400, 401, 403, 404, 409, 410, 422, 429, 500, 503]) {
      const err = errorFromStatus(status, { reason: 'Whatever', message: 'm' });
      expect(Object.getPrototypeOf(err), String(status)).toBe(KubeApiError.prototype);
      expect(err.name).toBe('KubeApiError');
    }
  });

  it('narrow what was caught to a KubeApiError', () => {
    const caught: unknown = errorFromStatus(429, undefined, { retryAfter: '3' });
    if (isTooManyRequests(caught)) {
      expectTypeOf(caught).toEqualTypeOf<KubeApiError>();
      expect(caught.retryAfterSeconds).toBe(3);
    } else {
      expect.unreachable('a 429 is a TooManyRequests answer');
    }
    for (const guard of Object.values(GUARDS)) expectTypeOf(guard).toEqualTypeOf<(err: unknown) => err is KubeApiError>();
  });

  it('are what the root entry exports, beside the one API error class and the errors that are not API answers', () => {
    expect(root.KubeApiError).toBe(KubeApiError);
    expect(root.DecodeError).toBe(DecodeError);
    expect(root.ConnectionError).toBe(ConnectionError);
    for (const [name, guard] of Object.entries(GUARDS)) expect((root as Record<string, unknown>)[name], name).toBe(guard);
    for (const gone of ['ExpiredError', 'TooManyRequestsError', 'UnauthorizedError', 'ForbiddenError', 'NotFoundError', 'ServerError']) {
      expect(gone in root, gone).toBe(false);
    }
  });
});
