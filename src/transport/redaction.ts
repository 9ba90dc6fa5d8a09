// What a server could echo of the credential a request sent, and how it is taken out of an error's text (HI-79).

import { unchanged, type Redact } from '../errors/api/wireText.js';

/** What replaces the credential in an error's text. */
export const REDACTED = '<redacted>';

/**
 * A secret shorter than this is not looked for: it would be found by chance
 * in ordinary words and make messages unreadable, while being too short to
 * be worth hiding.
 */
const MIN_SECRET = 4;

/**
 * What removes the credential in `authorization` (the header a request sent)
 * from text: the credential after the scheme (a bearer token, or basic
 * auth's base64), and for basic auth the decoded `user:password` and the
 * password. The secrets live only in the returned function's closure, never
 * on an object that could be logged.
 */
export function redactionOf(authorization: string | undefined): Redact {
  if (authorization === undefined) return unchanged;
  // Worked out on the first error only: an answer that fails nothing costs nothing.
  let secrets: string[] | undefined;
  return (text) => (secrets ??= secretsOf(authorization)).reduce((out, secret) => out.replaceAll(secret, REDACTED), text);
}

function secretsOf(authorization: string): string[] {
  const space = authorization.indexOf(' ');
  const scheme = space < 0 ? '' : authorization.slice(0, space);
  const credential = (space < 0 ? authorization : authorization.slice(space + 1)).trim();
  const found = [credential];
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    found.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
  }
  // Longest first, so `user:password` goes whole before the password alone.
  return found.filter((s) => s.length >= MIN_SECRET).sort((a, b) => b.length - a.length);
}
