/** The duration flags' parser, shared by every command that takes one. */
import { InvalidArgumentError } from 'commander';

/**
 * Parses `30s`, `2m`, `500ms` or a bare number of seconds.
 *
 * @param text what the user typed.
 * @returns milliseconds.
 */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) throw new InvalidArgumentError(`expected a duration such as 30s, 2m or 500ms, got ${JSON.stringify(text)}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}
