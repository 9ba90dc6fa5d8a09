import { createHash } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { sendJson } from '../client/request.js';
import { printable } from '../errors/printable.js';
import { plainHttpAllowed } from '../sources/http.js';
import { ConnectionError } from '../errors/api/ConnectionError.js';
import { KubeApiError } from '../errors/api/KubeApiError.js';

/** The user a TokenReview names. */
interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What the gate decided for one request: let it through, or the status and text to answer. */
export type MetricsVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 401 | 403; readonly message: string }
  /** A review that could not be made: `message` is all the caller is told; `detail` (which review, the API server's words) is for the reporter (WH-88). */
  | { readonly allowed: false; readonly status: 500; readonly message: 'Authentication failed' | 'Authorization failed'; readonly detail: string };

/** How long a refusal is remembered at most (controller-runtime: 30 s for a denied SubjectAccessReview), so a new RoleBinding takes effect soon. */
const REFUSAL_TTL_MS = 30_000;
// A bearer token as RFC 6750 allows it (b64token), bounded: a ServiceAccount token is a JWT of about a kilobyte.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const MAX_TOKEN_CHARS = 16_384;

/** A map that forgets entries after their time and keeps at most `max`, dropping the oldest first. */
class ExpiringCache<V> {
  readonly #max: number;
  // Oldest first (a Map keeps insertion order; a set moves the key to the end).
  readonly #entries = new Map<string, { readonly value: V; readonly until: number }>();

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string, now: number): V | undefined {
    const hit = this.#entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.until <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: string, value: V, until: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, until });
  }
}

/**
 * The gate of secure metrics, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization`: a request's bearer token is
 * authenticated with a TokenReview, and the user it names is authorized with
 * a SubjectAccessReview for `get` on the non-resource URL of the request's
 * path. Both answers are kept for `ttlMs` (a refusal at most 30 s), at most
 * `maxEntries` of each; a token is kept only as its SHA-256. An error reaching
 * the API server is a 500 with a fixed text, its details for the reporter only, and is not kept (WH-82, WH-88).
 */
export class MetricsGate {
  // Where the reviews are posted, plain http allowed for a local API server.
  readonly #kc: KubeConfig;
  // The API server's base URL, without a trailing slash.
  readonly #server: string;
  readonly #ttlMs: number;
  // Each review's own bound: controller-runtime gives a TokenReview 10 s.
  readonly #reviewTimeoutMs: number;
  // TokenReview answers by the token's SHA-256: the user, or null for a token that does not authenticate.
  readonly #users: ExpiringCache<ReviewedUser | null>;
  // SubjectAccessReview answers by user and path.
  readonly #decisions: ExpiringCache<boolean>;
  // The clock the cache times are read on.
  readonly #now: () => number;

  constructor(kc: KubeConfig, ttlMs: number, maxEntries: number, reviewTimeoutMs: number, now: () => number = Date.now) {
    this.#reviewTimeoutMs = reviewTimeoutMs;
    this.#kc = plainHttpAllowed(kc);
    this.#server = (kc.getCurrentCluster()?.server ?? '').replace(/\/+$/, '');
    this.#ttlMs = ttlMs;
    this.#users = new ExpiringCache(maxEntries);
    this.#decisions = new ExpiringCache(maxEntries);
    this.#now = now;
  }

  /** Whether the holder of `authorization` may `get` `path`; never throws. */
  async check(authorization: string | undefined, path: string, signal: AbortSignal | undefined): Promise<MetricsVerdict> {
    const bearer = authorization !== undefined && authorization.length <= MAX_TOKEN_CHARS + 16 ? BEARER.exec(authorization) : null;
    const token = bearer?.[1];
    if (token === undefined) return { allowed: false, status: 401, message: 'Unauthorized: send a bearer token (Authorization: Bearer <token>)' };
    let user: ReviewedUser | null;
    try {
      user = await this.#authenticate(token, signal);
    } catch (err) {
      return { allowed: false, status: 500, message: 'Authentication failed', detail: `Authentication failed: the TokenReview could not be made: ${describe(err)}` };
    }
    if (user === null) return { allowed: false, status: 401, message: 'Unauthorized' };
    let allowed: boolean;
    try {
      allowed = await this.#authorize(user, path, signal);
    } catch (err) {
      return {
        allowed: false,
        status: 500,
        message: 'Authorization failed',
        detail: `Authorization for user ${printable(user.username)} failed: the SubjectAccessReview could not be made: ${describe(err)}`,
      };
    }
    return allowed ? { allowed: true } : { allowed: false, status: 403, message: `Authorization denied for user ${printable(user.username)}` };
  }

  async #authenticate(token: string, signal: AbortSignal | undefined): Promise<ReviewedUser | null> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.#users.get(key, this.#now());
    if (cached !== undefined) return cached;
    const review = await this.#post<{ status?: { authenticated?: boolean; user?: Partial<ReviewedUser> } }>(
      'tokenreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      signal,
    );
    const u = review.status?.user;
    const user = review.status?.authenticated === true && typeof u?.username === 'string' ? userOf(u as ReviewedUser) : null;
    this.#users.set(key, user, this.#now() + (user === null ? Math.min(this.#ttlMs, REFUSAL_TTL_MS) : this.#ttlMs));
    return user;
  }

  /**
   * Creates a review of `resource` (tokenreviews in authentication.k8s.io, subjectaccessreviews in authorization.k8s.io),
   * trying once more after a connection error or a 5xx, both within `reviewTimeoutMs` (WH-91).
   */
  async #post<R>(resource: 'tokenreviews' | 'subjectaccessreviews', body: object, signal: AbortSignal | undefined): Promise<R> {
    const group = resource === 'tokenreviews' ? 'authentication.k8s.io' : 'authorization.k8s.io';
    const deadline = performance.now() + this.#reviewTimeoutMs;
    const attempt = (timeoutMs: number): Promise<R> =>
      sendJson<R>(this.#kc, { verb: 'POST', url: `${this.#server}/apis/${group}/v1/${resource}`, what: `create ${resource.slice(0, -1)}`, body, signal, timeoutMs });
    try {
      return await attempt(this.#reviewTimeoutMs);
    } catch (err) {
      const left = Math.floor(deadline - performance.now());
      if (!transient(err) || signal?.aborted === true || left < 1) throw err;
      return attempt(left);
    }
  }

  async #authorize(user: ReviewedUser, path: string, signal: AbortSignal | undefined): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, path]);
    const cached = this.#decisions.get(key, this.#now());
    if (cached !== undefined) return cached;
    const review = await this.#post<{ status?: { allowed?: boolean } }>(
      'subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid !== undefined && { uid: user.uid }),
          ...(user.groups !== undefined && { groups: user.groups }),
          ...(user.extra !== undefined && { extra: user.extra }),
          nonResourceAttributes: { path, verb: 'get' },
        },
      },
      signal,
    );
    const allowed = review.status?.allowed === true;
    this.#decisions.set(key, allowed, this.#now() + (allowed ? this.#ttlMs : Math.min(this.#ttlMs, REFUSAL_TTL_MS)));
    return allowed;
  }
}

/** Whether a failed review is worth one more try: the API server could not be reached, or answered 5xx. */
const transient = (err: unknown): boolean =>
  (err instanceof ConnectionError && err.code !== 'TIMEOUT' && err.code !== 'CREDENTIALS') || (err instanceof KubeApiError && err.status >= 500);

/** Only the fields a SubjectAccessReview takes, each of the right type: the review's answer is not trusted blindly. */
function userOf(u: ReviewedUser): ReviewedUser {
  const groups = Array.isArray(u.groups) ? u.groups.filter((g): g is string => typeof g === 'string') : undefined;
  const extra =
    u.extra !== null && typeof u.extra === 'object' && !Array.isArray(u.extra)
      ? Object.fromEntries(Object.entries(u.extra).filter(([, v]) => Array.isArray(v) && v.every((x) => typeof x === 'string')))
      : undefined;
  return {
    username: u.username,
    ...(typeof u.uid === 'string' && { uid: u.uid }),
    ...(groups !== undefined && { groups }),
    ...(extra !== undefined && { extra }),
  };
}

function describe(err: unknown): string {
  return printable(err instanceof Error ? err.message : String(err)).slice(0, 500);
}
