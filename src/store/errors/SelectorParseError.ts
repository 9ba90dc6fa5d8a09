/**
 * A label or field selector that does not parse or names an invalid label
 * key or value. Carries the whole input and the 0-based position of the
 * offending token, so the message can point at it.
 *
 * ## Example
 * ```ts
 * import { parseLabelSelector, SelectorParseError } from 'rxkube/core';
 *
 * try {
 *   parseLabelSelector('tier in a');
 * } catch (err) {
 *   if (err instanceof SelectorParseError) console.error(err.position, err.reason);
 *   // 8 "found 'a', expected '('"
 * }
 * ```
 */
export class SelectorParseError extends Error {
  override readonly name: string = 'SelectorParseError';
  /** Which kind of selector was being parsed. */
  readonly selectorKind: 'label' | 'field';
  /** The complete selector text as given. */
  readonly input: string;
  /** 0-based index into `input` where the problem starts. */
  readonly position: number;
  /** What is wrong, without the input and position. */
  readonly reason: string;

  /**
   * @param selectorKind `'label'` or `'field'`.
   * @param input the complete selector text.
   * @param position 0-based index of the offending token.
   * @param reason what is wrong there.
   */
  constructor(selectorKind: 'label' | 'field', input: string, position: number, reason: string) {
    super(`invalid ${selectorKind} selector ${JSON.stringify(input)} at position ${position}: ${reason}`);
    this.selectorKind = selectorKind;
    this.input = input;
    this.position = position;
    this.reason = reason;
  }
}
