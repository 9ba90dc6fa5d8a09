import type { Webhook } from './types.js';

/**
 * Whether a value is a webhook the runner can serve: validating, mutating
 * or conversion, with a path and a `review` function. Used to find the
 * webhooks a module exports.
 *
 * ## Example
 * ```ts
 * import { isWebhook } from 'rxkube/core';
 *
 * declare const loaded: Record<string, unknown>; // a module's exports: await import(path)
 * const webhooks = Object.values(loaded).filter(isWebhook);
 * for (const w of webhooks) console.log(w.type, w.path);
 * ```
 *
 * @param value Anything.
 * @returns true for a webhook.
 */
export function isWebhook(value: unknown): value is Webhook {
  if (typeof value !== 'object' || value === null) return false;
  const w = value as Partial<Webhook>;
  return (w.type === 'validating' || w.type === 'mutating' || w.type === 'conversion') && typeof w.path === 'string' && typeof w.review === 'function';
}
