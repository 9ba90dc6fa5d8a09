/**
 * A document that holds credentials (a kubeconfig, a Secret's kubeconfig)
 * could not be parsed. The parser's own error is not kept: js-yaml's message
 * quotes the lines around the fault (`token: …` among them), some of its
 * reasons quote the document (`unidentified alias "…"`), and its `mark`
 * holds the whole document. What is kept is where the fault is, and the
 * reason when it is one of the parser's fixed sentences.
 *
 * ## Example
 * ```ts
 * import { MalformedDocumentError } from 'rxkube/core';
 *
 * const err = MalformedDocumentError.from(new Error('bad indentation of a mapping entry'));
 * console.log(err.message); // bad indentation of a mapping entry
 * ```
 */
export class MalformedDocumentError extends Error {
  override readonly name = 'MalformedDocumentError';
  /** The line of the fault, from 1, when the parser said. */
  readonly line: number | undefined;
  /** The column of the fault, from 1, when the parser said. */
  readonly column: number | undefined;

  /**
   * @param message what is wrong, quoting nothing of the document.
   * @param line the line of the fault, from 1.
   * @param column the column of the fault, from 1.
   */
  constructor(message: string, line?: number, column?: number) {
    super(message);
    this.line = line;
    this.column = column;
  }

  /**
   * The error a parser threw, without anything it quoted of the document:
   * the position (js-yaml's `mark`), and the reason only when it is a fixed
   * sentence (letters, digits, spaces and `,;()[].%-`, at most 120
   * characters); any other reason, which may quote the document, becomes the
   * error's class name.
   *
   * @param err what the parser threw.
   * @returns the error to report instead, with no `cause`.
   */
  static from(err: unknown): MalformedDocumentError {
    const e = err as { reason?: unknown; message?: unknown; name?: unknown; mark?: { line?: unknown; column?: unknown } } | null;
    const reason = typeof e?.reason === 'string' ? e.reason : typeof e?.message === 'string' ? e.message.split('\n', 1)[0]?.trim() ?? '' : '';
    const said = isFixedSentence(reason) ? reason : `a ${typeof e?.name === 'string' && /^\w{1,40}$/.test(e.name) ? e.name : 'parse error'} that quotes the document, left out`;
    const line = typeof e?.mark?.line === 'number' ? e.mark.line + 1 : undefined;
    const column = typeof e?.mark?.column === 'number' ? e.mark.column + 1 : undefined;
    return new MalformedDocumentError(line === undefined ? said : `${said} at line ${line}, column ${column ?? '?'}`, line, column);
  }
}

/** A reason with no room for a quotation: the parser's fixed sentences pass, `unidentified alias "x"` does not. */
function isFixedSentence(reason: string): boolean {
  return reason.length > 0 && reason.length <= 120 && /^[A-Za-z0-9 ,;()[\].%-]+$/.test(reason.replace("':'", 'colon'));
}
