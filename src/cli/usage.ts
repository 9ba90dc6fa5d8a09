import type { Command } from 'commander';
import { printable } from '../errors/printable.js';
import { writeText } from './terminal.js';

/** A mistake in the command line or its kubeconfig, reported as one `error: …` line with exit code 1 before anything starts. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * A command's action: a usage mistake (a UsageError, a TypeError from an option check, a selector that does
 * not parse) is commander's one `error: …` line with exit code 1; an error from the cluster (unreachable,
 * 403, a server's refusal) is one `error: …` line too, escaped, instead of a stack.
 *
 * @param run the action, given commander's arguments without the command; returns the exit code.
 * @returns the handler for commander's `.action()`.
 */
export function act<A extends unknown[]>(run: (...args: A) => Promise<number>): (...args: [...A, Command]) => Promise<void> {
  return async (...args) => {
    const command = args[args.length - 1] as Command;
    try {
      process.exitCode = await run(...(args.slice(0, -1) as A));
    } catch (err) {
      if (err instanceof TypeError || err instanceof UsageError || (err instanceof Error && err.name === 'SelectorParseError')) {
        command.error(`error: ${printable(err.message, { newlines: true })}`);
      }
      if (!(err instanceof Error)) throw err;
      writeText(process.stderr, `error: ${printable(err.message, { newlines: true })}\n`);
      process.exitCode = 1;
    }
  };
}
