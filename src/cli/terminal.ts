/**
 * How the command meets its terminal: colours only on a TTY and never with
 * `NO_COLOR`; redrawing in place only on a TTY; Ctrl-C, SIGTERM and a closed
 * pipe all end the command through the same stop.
 */
import { createLogUpdate } from 'log-update';
import pc from 'picocolors';
import type { Colors } from 'picocolors/types.js';
import { printable } from '../errors/printable.js';

/**
 * Whether to colour output written to `stream`: a TTY, `NO_COLOR` unset or
 * empty, `TERM` not `dumb`; `FORCE_COLOR` (not `0`) forces colours on.
 *
 * @param stream stdout or stderr.
 * @param env the environment.
 * @returns true to colour.
 */
export function wantsColour(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  if (env['FORCE_COLOR'] !== undefined && env['FORCE_COLOR'] !== '0') return true;
  return stream.isTTY === true && env['TERM'] !== 'dumb';
}

/**
 * Colour functions for `stream`: picocolors, switched on or off by {@link wantsColour}.
 *
 * @param stream stdout or stderr.
 * @returns the colour functions (identity functions when off).
 */
export function coloursFor(stream: NodeJS.WriteStream): Colors {
  return pc.createColors(wantsColour(stream));
}

/**
 * Writes text to the terminal or pipe: the one way the command prints. Text
 * from the cluster is escaped where it is put into a line (so a table keeps
 * its widths), and here once more, so that whatever a line holds, only its
 * line breaks and the printer's own colours reach the terminal: a control
 * character that slipped through is shown as an escape, never acted on.
 *
 * @param stream stdout or stderr.
 * @param text the text, its line breaks included.
 */
export function writeText(stream: NodeJS.WritableStream, text: string): void {
  stream.write(printable(text, { newlines: true, colours: true }));
}

/**
 * An error as one line of the command's output: name and message, white space folded, escapes shown.
 *
 * @param err the error.
 * @returns the line, without its newline.
 */
export function errorLine(err: Error): string {
  return printable(`${err.name}: ${err.message.replace(/[ \t\n\r]+/g, ' ')}`);
}

/** A screen region redrawn in place (TTY only). */
export interface LiveScreen {
  /** Replaces what is shown. */
  draw(text: string): void;
  /** Leaves the last frame on screen and restores the cursor. */
  done(): void;
  readonly width: number;
  readonly height: number;
}

/**
 * A region of `stream` redrawn in place by log-update, the cursor hidden
 * while it lives.
 *
 * @param stream a TTY.
 * @returns the screen.
 */
export function liveScreen(stream: NodeJS.WriteStream): LiveScreen {
  const update = createLogUpdate(stream, { showCursor: false });
  return {
    draw: (text) => update(printable(text, { newlines: true, colours: true })),
    done: () => update.done(),
    get width() {
      return stream.columns ?? 120;
    },
    get height() {
      return stream.rows ?? 40;
    },
  };
}

/**
 * Resolves on the first Ctrl-C, SIGTERM, or EPIPE on stdout (the reader of a
 * pipe went away), with what happened; the listeners are removed then, so a
 * second Ctrl-C while shutting down kills the process as usual.
 *
 * @param signal also resolves when this aborts (the command ended by itself).
 * @returns why the command should stop.
 */
export function interrupted(signal: AbortSignal): Promise<'SIGINT' | 'SIGTERM' | 'EPIPE' | 'done'> {
  return new Promise((resolve) => {
    let finished = false;
    const finish = (why: 'SIGINT' | 'SIGTERM' | 'EPIPE' | 'done'): void => {
      if (finished) return;
      finished = true;
      // Removed after this signal's listeners have all run: log-update's cursor restorer (signal-exit) re-raises a
      // signal that no other listener is there to handle, which would kill the process before it closed anything.
      setImmediate(() => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
      });
      process.stdout.off('error', onPipe);
      signal.removeEventListener('abort', onAbort);
      // Later writes to a closed pipe must not crash the shutdown.
      if (why === 'EPIPE') process.stdout.on('error', () => {});
      resolve(why);
    };
    const onInt = (): void => finish('SIGINT');
    const onTerm = (): void => finish('SIGTERM');
    const onAbort = (): void => finish('done');
    const onPipe = (err: NodeJS.ErrnoException): void => {
      if (err.code === 'EPIPE') finish('EPIPE');
      else throw err;
    };
    if (signal.aborted) return resolve('done');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    process.stdout.on('error', onPipe);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
