import { waitFor } from './waitFor.js';

/** A probe's answer. */
export interface ProbeAnswer {
  readonly status: number;
  readonly body: string;
}

/** GETs a probe (or any URL): its status and body. */
export async function probe(url: string): Promise<ProbeAnswer> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/**
 * Polls `url` until it answers `status` (with a body matching `body`, when given), and returns that answer;
 * fails naming `what` and the last answer after `timeoutMs`. The condition is a server's answer, so it is
 * polled, every 20 ms, never slept on.
 */
export async function probeUntil(url: string, status: number, what: string, opts: { timeoutMs?: number; body?: RegExp } = {}): Promise<ProbeAnswer> {
  let last: ProbeAnswer | undefined;
  const answered = async (): Promise<ProbeAnswer | false> => {
    last = await probe(url);
    return last.status === status && (opts.body === undefined || opts.body.test(last.body)) && last;
  };
  return waitFor(answered, `${status} from ${url} (${what})`, opts.timeoutMs ?? 10_000, { everyMs: 20, describe: () => `last ${last?.status}:\n${last?.body}` });
}
