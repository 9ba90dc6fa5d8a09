import { isIP } from 'node:net';

// The string formats kube-apiserver checks for a CRD (apiextensions' supported list at 1.34, read
// from kube-openapi's strfmt registry). A format outside the list is ignored by the server, so it
// is ignored here too. Names are compared with dashes removed ("date-time" is "datetime").

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\.){3}[0-9a-fA-F]{4}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR = /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const BSON_OBJECT_ID = /^[0-9a-f]{24}$/;
const SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const DURATION_PART = /(\d+)\s*([A-Za-zµ]+)/g;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$/;
const DURATION_UNITS: readonly (readonly string[])[] = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (m === null) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] ?? '')) return false;
  const m = TIME.exec(parts[1] ?? '');
  return m !== null && (m[1] ?? '') <= '23' && (m[2] ?? '') <= '59' && (m[3] ?? '') <= '59';
}

/** Go's time.ParseDuration, or kube-openapi's looser "3 days" form. */
function isDuration(s: string): boolean {
  if (GO_DURATION.test(s)) return true;
  for (const [, , unitText] of s.matchAll(DURATION_PART)) {
    const unit = (unitText ?? '').trim().toLowerCase();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

function isUri(s: string): boolean {
  if (s === '' || /\s/.test(s)) return false;
  if (s.startsWith('/')) return true;
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s);
}

function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && Buffer.byteLength(s) <= 255 && s.split('.').every((p) => Buffer.byteLength(p) <= 63);
}

function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  const family = isIP(ip);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

const CHECKS: ReadonlyMap<string, (s: string) => boolean> = new Map([
  ['bsonobjectid', (s: string) => BSON_OBJECT_ID.test(s)],
  ['uri', isUri],
  ['email', (s: string) => EMAIL.test(s)],
  ['hostname', isHostname],
  ['ipv4', (s: string) => isIP(s) === 4],
  ['ipv6', (s: string) => isIP(s) === 6],
  ['cidr', isCidr],
  ['mac', (s: string) => MAC.test(s)],
  ['uuid', (s: string) => UUID.test(s)],
  ['uuid3', (s: string) => UUID3.test(s)],
  ['uuid4', (s: string) => UUID4.test(s)],
  ['uuid5', (s: string) => UUID5.test(s)],
  ['ssn', (s: string) => SSN.test(s)],
  ['hexcolor', (s: string) => HEXCOLOR.test(s)],
  ['rgbcolor', (s: string) => RGBCOLOR.test(s)],
  ['byte', (s: string) => s === '' || BASE64.test(s)],
  ['password', () => true],
  ['date', isDate],
  ['duration', isDuration],
  ['datetime', isDateTime],
  ['k8sshortname', (s: string) => s.length <= 63 && SHORT_NAME.test(s)],
  ['k8slongname', (s: string) => s.length <= 253 && LONG_NAME.test(s)],
]);

/** Formats the server knows but the simulator accepts unchecked (their checksum rules are not implemented). */
const UNCHECKED: ReadonlySet<string> = new Set(['isbn', 'isbn10', 'isbn13', 'creditcard']);

/** The check for `format`, or undefined when the server ignores the format (or the simulator leaves it unchecked). */
export function formatCheck(format: string): ((s: string) => boolean) | undefined {
  const name = format.replaceAll('-', '');
  return UNCHECKED.has(name) ? undefined : CHECKS.get(name);
}

/** Whether the server keeps `format` on a schema (it strips the formats it does not support). */
export function isSupportedFormat(format: string): boolean {
  const name = format.replaceAll('-', '');
  return CHECKS.has(name) || UNCHECKED.has(name);
}
