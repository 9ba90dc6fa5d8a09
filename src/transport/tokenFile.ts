import { readFileSync, statSync, type Stats } from 'node:fs';
import { codeSuffix, CredentialFailure } from './credentialFailure.js';

/** What was last read from a token file, and how to tell that the file changed since. */
interface CachedToken {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly token: string;
}

/** A bearer token is a few KiB at most; a larger file is not a token file and is not read. */
const MAX_TOKEN_FILE = 1024 * 1024;

/** The last good token of each token file a process reads; a pod has one file, so this never grows. */
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
 * A file that is empty, missing, unreadable, not a regular file (a FIFO would
 * block the process) or larger than 1 MiB does not replace the last good
 * token: that token is answered until the file is good again, as client-go's
 * caching token source does. Only a file that never held a token fails.
 *
 * @throws {CredentialFailure} when the file has never given a token; its message names the reason, never the contents.
 */
export function tokenFromFile(path: string): string {
  const cached = cache.get(path);
  let read: { readonly st: Stats; readonly token: string } | CredentialFailure;
  try {
    const st = statSync(path);
    if (cached !== undefined && cached.ino === st.ino && cached.size === st.size && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs) {
      return cached.token;
    }
    read = readToken(path, st);
  } catch (err) {
    read = new CredentialFailure(`the token file could not be read${codeSuffix(err)}`, (err as { code?: string }).code);
  }
  if (read instanceof CredentialFailure) {
    if (cached !== undefined) return cached.token;
    throw read;
  }
  cache.set(path, { ino: read.st.ino, size: read.st.size, mtimeMs: read.st.mtimeMs, ctimeMs: read.st.ctimeMs, token: read.token });
  return read.token;
}

function readToken(path: string, st: Stats): { readonly st: Stats; readonly token: string } | CredentialFailure {
  if (!st.isFile()) return new CredentialFailure('the token file is not a regular file');
  if (st.size > MAX_TOKEN_FILE) return new CredentialFailure(`the token file is larger than ${MAX_TOKEN_FILE} bytes`);
  const token = readFileSync(path, 'utf8').trim();
  return token === '' ? new CredentialFailure('the token file is empty') : { st, token };
}
