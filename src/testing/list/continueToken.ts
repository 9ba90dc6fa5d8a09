import { badRequest } from '../server/status.js';

/** Encodes a position as an opaque base64url token, the shape kube-apiserver uses. */
export function encodeContinue(rv: number, lastKey: string): string {
  // "\u0000" sorts right after lastKey, so the next page starts strictly after it.
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

/**
 * Decodes a token into the snapshot's resourceVersion and the first key the next page may return,
 * answering 400 for anything this server did not issue.
 */
export function decodeContinue(token: string): { readonly rv: number; readonly start: string } {
  let p = null as { v?: unknown; rv?: unknown; start?: unknown } | null;
  try {
    p = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof p;
  } catch {
    // Not JSON: refused below, as any other token this server did not issue.
  }
  if (p === null || typeof p !== 'object' || p.v !== 'meta.k8s.io/v1' || !Number.isSafeInteger(p.rv) || (p.rv as number) < 1 || typeof p.start !== 'string') {
    throw badRequest(`continue key is not valid: ${JSON.stringify(token)}`);
  }
  return { rv: p.rv as number, start: p.start };
}
