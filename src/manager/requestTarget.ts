/** A request-target the runner's servers accept: its path and its query. */
export interface RequestTarget {
  readonly path: string;
  readonly query: URLSearchParams;
}

// RFC 3986 pchar (unreserved, pct-encoded, sub-delims, ':' and '@') and '/', the characters of an absolute-path.
const PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)+$/;
// What a query may hold (pchar, '/' and '?').
const QUERY = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
const ABSOLUTE = /^https?:\/\//i;

/**
 * Reads a request-target the way RFC 9112 (section 3.2) defines it, for a server that only serves GET:
 * origin-form (`/healthz?verbose`) or absolute-form (`http://host/healthz`). Anything else (`*`, an
 * authority, a path with characters a URI may not hold such as `//[`, an absolute URI that does not parse
 * such as `http://[`) is undefined, which the caller answers with 400. It never throws: WHATWG `new URL`
 * reads `//x:99999/` relative to a base as a host and a port, and throws on it, where RFC 9112 sees a path.
 *
 * @returns the path and query, or undefined for a malformed target.
 */
export function parseRequestTarget(target: string): RequestTarget | undefined {
  if (ABSOLUTE.test(target)) return absoluteForm(target);
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? '' : target.slice(q + 1);
  if (!PATH.test(path) || !QUERY.test(query)) return undefined;
  return { path, query: new URLSearchParams(query) };
}

function absoluteForm(target: string): RequestTarget | undefined {
  const afterScheme = target.indexOf('//') + 2;
  const slash = target.indexOf('/', afterScheme);
  const query = target.indexOf('?', afterScheme);
  const end = Math.min(slash < 0 ? target.length : slash, query < 0 ? target.length : query);
  const rest = target.slice(end);
  try {
    // Only to refuse an authority that is no host and port (`http://[`, `http://x:99999`).
    new URL(target.slice(0, end));
  } catch {
    return undefined;
  }
  return parseRequestTarget(rest.startsWith('/') ? rest : `/${rest}`);
}
