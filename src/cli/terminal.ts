/**
 * How the command meets its terminal: colours only on a TTY and never with
 * `NO_COLOR`; redrawing in place only on a TTY; Ctrl-C, SIGTERM and a closed
 * pipe all end the command through the same stop.
 */
import { createLogUpdate } from 'log-update';
import pc from 'picocolors';
import type { Colors } from 'picocolors/types.js';
import { printable } from '../errors/printable.js';
import type { Informer } from '../informer/types.js';
import type { KubeObject } from '../store/types.js';

/**
 * Colour functions for `stream`: picocolors, on for a TTY with `NO_COLOR` unset or empty and `TERM` not
 * `dumb`; `FORCE_COLOR` (not `0`) forces them on, `NO_COLOR` wins over it.
 *
 * @param stream stdout or stderr.
 * @returns the colour functions (identity functions when off).
 */
export function coloursFor(stream: NodeJS.WriteStream): Colors {
  const { NO_COLOR, FORCE_COLOR, TERM } = process.env;
  if (NO_COLOR !== undefined && NO_COLOR !== '') return pc.createColors(false);
  const forced = FORCE_COLOR !== undefined && FORCE_COLOR !== '0';
  return pc.createColors(forced || (stream.isTTY === true && TERM !== 'dumb'));
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

/**
 * A region of `stream` redrawn in place by log-update, the cursor hidden
 * while it lives.
 *
 * @param stream a TTY.
 * @returns the screen: `draw` replaces what is shown, `done` leaves the last frame and restores the cursor.
 */
export function liveScreen(
  stream: NodeJS.WriteStream,
): { draw(text: string): void; done(): void; readonly width: number; readonly height: number } {
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

/** A live view: on a TTY redrawn in place, at most every FRAME_MS and at least every second; else nothing. */
export interface LiveLoop {
  /** True on a TTY, where the view is drawn. */
  readonly screen: boolean;
  /** Abort it to end the loop (a fatal error). */
  readonly ended: AbortController;
  /** Draws soon, however often it is called. */
  redraw(): void;
  /** Draws, then redraws until Ctrl-C, SIGTERM, a closed pipe or `ended`; the last frame stays on screen. */
  run(): Promise<void>;
}

/** Redraws at most this often, however fast events come. */
const FRAME_MS = 200;

/**
 * The live view of `stream`, drawn by `render` when `tty` (a TTY with the table output).
 *
 * @param stream stdout.
 * @param tty whether to draw.
 * @param render the view, for the screen's width and the height it may take.
 * @returns the loop.
 */
export function liveLoop(
  stream: NodeJS.WriteStream,
  tty: boolean,
  render: (width: number, height: number) => string,
): LiveLoop {
  const screen = tty ? liveScreen(stream) : undefined;
  const ended = new AbortController();
  let frame: NodeJS.Timeout | undefined;
  const draw = (): void => {
    frame = undefined;
    if (screen !== undefined && !ended.signal.aborted) screen.draw(render(screen.width, screen.height - 1));
  };
  return {
    screen: screen !== undefined,
    ended,
    redraw: () => {
      if (screen !== undefined && frame === undefined) frame = setTimeout(draw, FRAME_MS);
    },
    run: async () => {
      const tick = screen === undefined ? undefined : setInterval(draw, 1_000);
      draw();
      await interrupted(ended.signal);
      clearInterval(tick);
      clearTimeout(frame);
      draw();
      ended.abort();
      screen?.done();
    },
  };
}

/**
 * Waits for the informer's sync; Ctrl-C, SIGTERM or a closed pipe give it up the same way a timeout does.
 *
 * @param informer a one-cluster or multi-cluster informer.
 * @param timeout ms to wait.
 * @returns true once synced, false when interrupted.
 * @throws what `whenSynced` throws (a timeout, the error that ended the informer).
 */
export async function syncedOrInterrupted(
  informer: Pick<Informer<KubeObject>, 'whenSynced'>,
  timeout: number,
): Promise<boolean> {
  const waiting = new AbortController();
  const cancel = new AbortController();
  const stopped = interrupted(waiting.signal).then((why) => {
    if (why !== 'done') cancel.abort();
  });
  try {
    await informer.whenSynced({ timeout, signal: cancel.signal });
    return true;
  } catch (err) {
    if (cancel.signal.aborted) return false;
    throw err;
  } finally {
    waiting.abort();
    await stopped;
  }
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
