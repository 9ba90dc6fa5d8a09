/**
 * Text from a cluster (a Pod's reason, a Lease's holder, a server's Status
 * message) made safe to print: the bytes a terminal acts on are shown as
 * escapes instead of being acted on, as kubectl does since CVE-2021-25743.
 * One function, applied where text meets a terminal or a log.
 */

/**
 * What a terminal acts on: C0 controls (ESC, BEL, CR, …), DEL, the C1 range
 * (CSI `\u009b` and OSC `\u009d` start sequences on terminals that honour
 * 8-bit controls) and the bidirectional overrides and isolates, which make
 * text read in a different order than it is stored (the "Trojan Source"
 * trick). SGR sequences (`ESC [ … m`) are matched whole so the printer's own
 * colours can be let through on request.
 */
const CONTROL = /\x1b\[[0-9;]*m|[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Options of {@link printable}. */
export interface PrintableOptions {
  /** Leave `\n` as a line break (for text that is several lines by design). @default false: `\n` is shown as `\x0a` */
  readonly newlines?: boolean;
  /** Leave colour sequences (`ESC [ … m`) alone: for text whose only such sequences are the printer's own. @default false */
  readonly colours?: boolean;
}

function escapeOne(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text with every character a terminal would act on written as a visible
 * escape: `\x1b` for ESC and the other C0 controls and DEL, `\u009b` for the
 * C1 controls, `\u202e` for the bidirectional overrides and isolates. Nothing
 * is deleted, so what a hostile object tried to do stays readable. Used by
 * the default stderr reporter and by everything `rxkube` prints; use it
 * before writing text from a cluster (an error message, an object's field) to
 * a terminal or a log.
 *
 * ## Example
 * ```ts
 * import { printable } from 'rxkube/core';
 *
 * const reason = '\u001b]0;pwned\u0007CrashLoopBackOff';
 * console.log(printable(reason)); // \x1b]0;pwned\x07CrashLoopBackOff
 * ```
 *
 * @param text the text to print.
 * @param opts whether line breaks and colour sequences are the printer's own.
 * @returns the text, safe to write to a terminal.
 */
export function printable(text: string, opts: PrintableOptions = {}): string {
  return text.replace(CONTROL, (ch) => {
    if (ch.length > 1) return opts.colours === true ? ch : `\\x1b${ch.slice(1)}`;
    if (ch === '\n' && opts.newlines === true) return ch;
    return escapeOne(ch);
  });
}

/** What JSON.stringify leaves raw that a terminal may act on: DEL, C1, bidi (it already escapes C0). */
const JSON_RAW = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text (as JSON.stringify writes it) with DEL, the C1 controls and the
 * bidirectional controls written as `\u` escapes, which JSON.stringify leaves
 * raw. The result is still JSON and parses to the same value, since those
 * characters can only occur inside strings.
 *
 * @param json the JSON text.
 * @returns the same JSON with no character a terminal acts on.
 */
export function printableJson(json: string): string {
  return json.replace(JSON_RAW, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
