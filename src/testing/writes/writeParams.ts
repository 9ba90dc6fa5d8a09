import type { IncomingMessage } from 'node:http';
import { invalid } from '../server/status.js';

/** The query parameters every write takes: dryRun, fieldManager and, for an apply, force. */
export interface WriteParams {
  /** `dryRun=All`: everything but storing. */
  readonly dryRun: boolean;
  /** Who writes: the `fieldManager` parameter, else the start of the User-Agent (as kube-apiserver derives it). */
  readonly manager: string;
  /** `force=true` on an apply. */
  readonly force: boolean;
}

/** kube-apiserver's limit on a field manager's name. */
const MANAGER_LIMIT = 128;

/**
 * Reads and checks the write parameters of a request, with kube-apiserver's
 * 422s: a dryRun other than `All`, a field manager that is too long or
 * missing on an apply, `force` on anything but an apply.
 *
 * @param options `CreateOptions`, `UpdateOptions`, `PatchOptions` or `DeleteOptions`: the kind named in errors.
 */
export function writeParams(q: URLSearchParams, req: IncomingMessage, options: string, apply: boolean): WriteParams {
  const what = `${options}.meta.k8s.io ""`;
  const dryRun = q.getAll('dryRun');
  for (const v of dryRun) {
    if (v !== 'All') throw invalid(what, 'dryRun', `Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
  }
  const given = q.get('fieldManager') ?? '';
  if (given.length > MANAGER_LIMIT) throw invalid(what, 'fieldManager', `Too long: may not be more than ${MANAGER_LIMIT} bytes`);
  if (apply && given === '') throw invalid(what, 'fieldManager', 'Required value: is required for apply patch');
  const forceText = q.get('force');
  if (forceText !== null && !apply) throw invalid(what, 'force', 'Forbidden: may not be specified for non-apply patch');
  const agent = (req.headers['user-agent'] ?? '').split('/')[0]?.trim() ?? '';
  return {
    dryRun: dryRun.length > 0,
    manager: given !== '' ? given : agent !== '' ? agent.slice(0, MANAGER_LIMIT) : 'unknown',
    force: forceText === 'true' || forceText === '1',
  };
}
