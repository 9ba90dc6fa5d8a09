// The selectors of a store's list() options: a text is parsed once and reused
// while callers keep passing the same text; an empty selector matches all.
// Internal.

import { parseFieldSelector, type FieldSelector } from './fieldSelector.js';
import { parseLabelSelector, type LabelSelector } from './labelSelector.js';
import { describeValue } from '../options/validate.js';

export class SelectorCache {
  // Last parsed selector texts: callers pass the same text again and again.
  #labelText: string | undefined;
  #labelSel: LabelSelector | undefined;
  #fieldText: string | undefined;
  #fieldSel: FieldSelector | undefined;

  /** The `labelSelector` option as a selector, or undefined when absent or empty; throws TypeError or SelectorParseError. */
  label(sel: unknown): LabelSelector | undefined {
    if (sel === undefined) return undefined;
    let parsed: LabelSelector;
    if (typeof sel === 'string') {
      if (sel !== this.#labelText) {
        this.#labelSel = parseLabelSelector(sel);
        this.#labelText = sel;
      }
      parsed = this.#labelSel as LabelSelector;
    } else if (sel !== null && typeof sel === 'object' && typeof (sel as LabelSelector).matches === 'function') {
      parsed = sel as LabelSelector;
    } else {
      throw new TypeError(`list: option "labelSelector" must be a string or a LabelSelector, got ${describeValue(sel)}`);
    }
    return parsed.empty ? undefined : parsed;
  }

  /** The `fieldSelector` option as a selector, or undefined when absent or empty; throws TypeError or SelectorParseError. */
  field(sel: unknown): FieldSelector | undefined {
    if (sel === undefined) return undefined;
    let parsed: FieldSelector;
    if (typeof sel === 'string') {
      if (sel !== this.#fieldText) {
        this.#fieldSel = parseFieldSelector(sel);
        this.#fieldText = sel;
      }
      parsed = this.#fieldSel as FieldSelector;
    } else if (sel !== null && typeof sel === 'object' && typeof (sel as FieldSelector).matches === 'function') {
      parsed = sel as FieldSelector;
    } else {
      throw new TypeError(`list: option "fieldSelector" must be a string or a FieldSelector, got ${describeValue(sel)}`);
    }
    return parsed.empty ? undefined : parsed;
  }
}
