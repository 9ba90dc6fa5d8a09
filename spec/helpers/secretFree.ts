import { inspect } from 'node:util';

/** Every way an error may be printed or logged: its message, stack, each cause's, JSON and util.inspect (causes included). */
export function renderings(err: unknown): string[] {
  const out: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 20; depth++) {
    if (e instanceof Error) out.push(e.message, e.stack ?? '', String(e));
    else out.push(String(e));
    try {
      out.push(JSON.stringify(e) ?? '');
    } catch {
      // A cycle: inspect below still shows it.
    }
    e = (e as { cause?: unknown }).cause;
  }
  out.push(inspect(err, { depth: Infinity, showHidden: true }));
  return out;
}

/** The first rendering of `err` that contains `secret`, or undefined when none does. */
export function leak(err: unknown, secret: string): string | undefined {
  return renderings(err).find((text) => text.includes(secret));
}
