import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import type { WorkQueueAddOptions } from './types.js';

/**
 * controller-runtime's low priority (`handler.LowPriority`): what a
 * controller gives keys that come from the initial list or a resync, so
 * that a live change is handed out before that backlog. Items without a
 * priority have 0.
 *
 * ## Example
 * ```ts
 * import { LOW_PRIORITY, workQueue } from 'rxkube';
 * declare const everyKey: string[];
 *
 * const queue = workQueue<string>();
 * for (const key of everyKey) queue.add(key, { priority: LOW_PRIORITY });
 * queue.add('default/just-changed'); // taken before the backlog
 * ```
 */
export const LOW_PRIORITY = -100;

// Built once: every add with options checks against it.
const ADD_OPTION_NAMES = optionNames<WorkQueueAddOptions>({ priority: true });

/** The priority of an add's options: 0 when absent, else a finite number. */
export function priorityOption(where: string, opts: unknown): number {
  if (opts === undefined) return 0;
  const priority = checkOptionNames(where, opts, ADD_OPTION_NAMES)['priority'];
  if (priority === undefined) return 0;
  if (typeof priority !== 'number' || !Number.isFinite(priority)) {
    throw new TypeError(`${where}: option "priority" must be a finite number, got ${describeValue(priority)}`);
  }
  return priority;
}
