import { readFileSync, statSync } from 'node:fs';

/** What was last read from a token file, and how to tell that the file changed since. */
interface CachedToken {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly token: string;
}

/** One entry per token file a process reads; a pod has one, so this never grows. */
const cache = new Map<string, CachedToken>();

/**
 * The bearer token in `path`, read again whenever the file changed (internal).
 *
 * The kubelet replaces a projected service-account token about once an hour
 * (at 80 % of its lifetime) by swapping a symlink, so the path names a new
 * file. client-node and client-go re-read the file once a minute whatever
 * happens; here every request looks at the file's identity (inode, size,
 * modification and change times — one `stat`) and reads it only when that
 * moved, so the first request after a rotation carries the new token. The
 * token is trimmed as client-go does: a trailing newline is not part of it.
 *
 * @throws the file system's error when the file cannot be read (the caller reports it without the token).
 */
export function tokenFromFile(path: string): string {
  const st = statSync(path);
  const cached = cache.get(path);
  if (cached !== undefined && cached.ino === st.ino && cached.size === st.size && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs) {
    return cached.token;
  }
  const token = readFileSync(path, 'utf8').trim();
  cache.set(path, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, token });
  return token;
}
