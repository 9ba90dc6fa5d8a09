import { printable } from '../../errors/printable.js';
import { describeValue } from '../../options/validate.js';

/**
 * A user the simulator knows by a bearer token: its requests authenticate
 * as this user, and a TokenReview of the token answers with it.
 *
 * ## Example
 * ```ts
 * import { startApiServer, type SimulatedUser } from 'rxkube/testing';
 *
 * const prometheus: SimulatedUser = { token: 'prom-token', username: 'system:serviceaccount:monitoring:prometheus', groups: ['system:serviceaccounts'] };
 * const server = await startApiServer({ token: 'admin', users: [prometheus] });
 * ```
 */
export interface SimulatedUser {
  /** The bearer token: non-empty, without whitespace, unique among the users and the admin's. */
  readonly token: string;
  /** The user name, e.g. `system:serviceaccount:ns:name`. */
  readonly username: string;
  /** Groups besides `system:authenticated`, which every authenticated user is in as on kube-apiserver. @default [] */
  readonly groups?: readonly string[];
  /** @default undefined (no uid) */
  readonly uid?: string;
  /** Extra attributes, as an authenticator's `extra`. @default undefined */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** Who made a request, as kube-apiserver's user.Info carries it: an AdmissionReview's `userInfo`, a TokenReview's `status.user`. */
export type UserInfo = Omit<SimulatedUser, 'token' | 'groups'> & { readonly groups: readonly string[] };

/**
 * What a SubjectAccessReview asks, as the `authorize` option of
 * `startApiServer` is given it: the review's `spec` (`user`, `groups`,
 * `uid`, `extra`, and exactly one of `resourceAttributes` /
 * `nonResourceAttributes`), reduced to its strings.
 *
 * ## Example
 * ```ts
 * import { startApiServer, type AccessAttributes } from 'rxkube/testing';
 *
 * const metricsReader = (a: AccessAttributes) => a.nonResourceAttributes?.path === '/metrics' && a.user === 'system:serviceaccount:monitoring:prometheus';
 * const server = await startApiServer({ authorize: metricsReader });
 * ```
 */
export interface AccessAttributes {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  readonly extra?: Readonly<Record<string, readonly string[]>>;
  readonly resourceAttributes?: {
    readonly namespace?: string;
    readonly verb?: string;
    readonly group?: string;
    readonly version?: string;
    readonly resource?: string;
    readonly subresource?: string;
    readonly name?: string;
  };
  readonly nonResourceAttributes?: { readonly path?: string; readonly verb?: string };
}

/**
 * What the `authorize` option decides for one SubjectAccessReview: a
 * boolean, or `{ allowed, denied?, reason? }` where `denied` is an explicit
 * denial (reported only when not allowed) and `reason` goes to
 * `status.reason`.
 *
 * ## Example
 * ```ts
 * import type { AccessAttributes, AccessDecision } from 'rxkube/testing';
 *
 * const noSecrets = (a: AccessAttributes): AccessDecision =>
 *   a.resourceAttributes?.resource === 'secrets' ? { allowed: false, denied: true, reason: 'secrets are off limits' } : true;
 * ```
 */
export type AccessDecision = boolean | { readonly allowed: boolean; readonly denied?: boolean; readonly reason?: string };

/** The admin: who the `token` option (or, with no authentication, everybody) is. */
export const ADMIN: UserInfo = { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

const MAX_NAME = 1000;

function plainToken(v: unknown): v is string {
  return typeof v === 'string' && v !== '' && !/\s/.test(v);
}

/** Checks the `users` option and indexes it by token; a TypeError names the entry and the field. */
export function usersByToken(users: unknown, adminToken: string | undefined): Map<string, UserInfo> {
  const out = new Map<string, UserInfo>();
  if (users === undefined) return out;
  if (!Array.isArray(users)) throw new TypeError(`startApiServer: users must be an array of { token, username, groups?, uid? }, got ${describeValue(users)}`);
  if (users.length > 0 && adminToken === undefined) throw new TypeError('startApiServer: users needs the token option too (the admin\'s token, which the kubeconfig carries)');
  for (const [i, u] of (users as unknown[]).entries()) {
    const at = `startApiServer: users[${i}]`;
    if (u === null || typeof u !== 'object') throw new TypeError(`${at} must be an object, got ${describeValue(u)}`);
    const { token, username, groups, uid, extra } = u as Record<string, unknown>;
    if (!plainToken(token)) throw new TypeError(`${at}.token must be a non-empty string without whitespace, got ${describeValue(token)}`);
    if (token === adminToken || out.has(token)) throw new TypeError(`${at}.token is the token of another user or of the admin`);
    if (typeof username !== 'string' || username === '' || username.length > MAX_NAME) throw new TypeError(`${at}.username must be a non-empty string, got ${describeValue(username)}`);
    if (groups !== undefined && (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string' || g === ''))) {
      throw new TypeError(`${at}.groups must be an array of non-empty strings, got ${describeValue(groups)}`);
    }
    if (uid !== undefined && typeof uid !== 'string') throw new TypeError(`${at}.uid must be a string, got ${describeValue(uid)}`);
    if (extra !== undefined && (extra === null || typeof extra !== 'object' || Object.values(extra).some((v) => !Array.isArray(v) || v.some((s) => typeof s !== 'string')))) {
      throw new TypeError(`${at}.extra must map names to arrays of strings, got ${printable(describeValue(extra))}`);
    }
    const all = [...((groups as string[] | undefined) ?? [])];
    if (!all.includes('system:authenticated')) all.push('system:authenticated');
    out.set(token, {
      username,
      groups: all,
      ...(uid === undefined ? {} : { uid: uid as string }),
      ...(extra === undefined ? {} : { extra: structuredClone(extra) as Record<string, string[]> }),
    });
  }
  return out;
}
