import { reportTo } from '../errors/reportTo.js';

/**
 * A reporter that passes on one error per kind (its name and HTTP status)
 * per `intervalMs` (internal): the next one of that kind says how many were
 * held back. Errors go to `sink`, or the process-wide reporter.
 */
export function throttledReporter(sink: ((err: Error) => void) | undefined, intervalMs: number, now: () => number): (err: Error) => void {
  const seen = new Map<string, { at: number; held: number }>();
  return (err) => {
    const status = (err as { status?: unknown }).status;
    const kind = `${err.name}|${typeof status === 'number' ? status : ''}`;
    const t = now();
    const last = seen.get(kind);
    if (last !== undefined && t - last.at < intervalMs) {
      last.held++;
      return;
    }
    seen.set(kind, { at: t, held: 0 });
    if (last !== undefined && last.held > 0) err.message += ` (${last.held} more like it held back)`;
    reportTo(sink, err);
  };
}
