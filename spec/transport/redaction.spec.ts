import { describe, expect, it } from 'vitest';
import { MAX_WIRE_TEXT, wireText } from '../../src/errors/api/wireText.js';
import { redactionOf } from '../../src/transport/redaction.js';

describe('redactionOf (HI-79)', () => {
  it('takes a bearer token out wherever it stands, the header quoted whole or the token alone', () => {
    const redact = redactionOf('Bearer abc.def-ghi');
    expect(redact('you sent Authorization: Bearer abc.def-ghi, i.e. abc.def-ghiabc.def-ghi')).toBe('you sent Authorization: Bearer <redacted>, i.e. <redacted><redacted>');
  });

  it('takes basic auth out as base64, as user:password and as the password alone', () => {
    const basic = Buffer.from('admin:s3cret-pw').toString('base64');
    const redact = redactionOf(`Basic ${basic}`);
    expect(redact(`${basic} / admin:s3cret-pw / s3cret-pw`)).toBe('<redacted> / <redacted> / <redacted>');
  });

  it('looks for no secret shorter than 4 characters, and changes nothing without a credential', () => {
    expect(redactionOf(`Basic ${Buffer.from('a:pw').toString('base64')}`)('a pw was refused')).toBe('a pw was refused');
    expect(redactionOf(undefined)('Bearer x')).toBe('Bearer x');
  });

  it('redacts before cutting: a token across the cut leaves no part of it', () => {
    const token = 'tok-0123456789abcdef';
    const text = `${'x'.repeat(MAX_WIRE_TEXT - 5)}${token}`;
    const kept = wireText(text, redactionOf(`Bearer ${token}`));
    // The placeholder may be cut; the token never is, so none of it is left.
    expect(kept).toBe(`${'x'.repeat(MAX_WIRE_TEXT - 5)}<reda… (5 more characters left out)`);
    expect(wireText(text)).not.toContain(token);
    expect(wireText(text)).toContain(token.slice(0, 5));
  });

  it('never cuts a surrogate pair in half', () => {
    const kept = wireText(`${'x'.repeat(MAX_WIRE_TEXT - 1)}😀tail`);
    expect(kept.startsWith(`${'x'.repeat(MAX_WIRE_TEXT - 1)}…`)).toBe(true);
    expect(kept).toMatch(/\(6 more characters left out\)$/);
  });
});
