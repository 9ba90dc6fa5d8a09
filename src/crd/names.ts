import { describeValue } from '../options/validate.js';

// Names of a custom resource as apiextensions-apiserver's validation checks them, and the plural rules
// that derive the names nobody should have to write.

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const UPPER_CAMEL = /^[A-Z][A-Za-z0-9]*$/;

/** Throws a TypeError naming the option unless `value` is a DNS-1035 label (lower case, starts with a letter, ≤ 63). */
export function dns1035Label(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > 63 || !DNS1035_LABEL.test(value)) {
    throw new TypeError(`customResource: ${option} must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, at most 63), got ${describeValue(value)}`);
  }
  return value;
}

/** Throws a TypeError unless `value` is a DNS-1123 subdomain with at least one dot, as a CRD's group must be. */
export function groupName(value: unknown): string {
  const ok = typeof value === 'string' && value.length <= 253 && value.includes('.') && value.split('.').every((l) => l.length <= 63 && DNS1123_LABEL.test(l));
  if (!ok) {
    throw new TypeError(`customResource: group must be a lower-case DNS subdomain with at least one dot ('example.com'), got ${describeValue(value)}`);
  }
  return value;
}

/** Throws a TypeError unless `value` is an UpperCamel kind whose lower-case form is a DNS-1035 label. */
export function kindName(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > 63 || !UPPER_CAMEL.test(value)) {
    throw new TypeError(`customResource: ${option} must be UpperCamelCase letters and digits ('Website'), at most 63, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * The English plural of a lower-case word by the regular rules: `-s`, `-x`,
 * `-z`, `-ch`, `-sh` take `-es`; a consonant before a final `-y` becomes
 * `-ies`; everything else takes `-s`. Irregular words (`person`) need the
 * `plural` option.
 */
export function pluralOf(word: string): string {
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}
