import { create } from '@bufbuild/protobuf';
import { DurationSchema, timestampFromDate } from '@bufbuild/protobuf/wkt';

// Kubernetes hands CEL a string by its format: `date` and `date-time` as a timestamp, `duration`
// as a duration, `byte` as bytes; every other string stays a string. A string the conversion
// cannot read stays a string too (it failed format validation already, which blocks the rules).

const UNITS: Readonly<Record<string, number>> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const GO_DURATION = /^([-+]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+|0)$/;
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/** Go's time.ParseDuration, in nanoseconds, or undefined. */
function goDurationNanos(s: string): bigint | undefined {
  const m = GO_DURATION.exec(s);
  if (m === null) return undefined;
  let total = 0;
  for (const [, amount = '0', unit = 's'] of (m[2] ?? '').matchAll(PART)) total += Number(amount) * (UNITS[unit] ?? 0);
  const nanos = BigInt(Math.round(total));
  return m[1] === '-' ? -nanos : nanos;
}

function duration(s: string): unknown {
  const nanos = goDurationNanos(s);
  if (nanos === undefined) return s;
  return create(DurationSchema, { seconds: nanos / 1_000_000_000n, nanos: Number(nanos % 1_000_000_000n) });
}

function timestamp(s: string): unknown {
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? s : timestampFromDate(new Date(ms));
}

function bytes(s: string): unknown {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(s) ? new Uint8Array(Buffer.from(s, 'base64')) : s;
}

/** The CEL value of a string of the given format. */
export function formattedString(s: string, format: string): unknown {
  switch (format) {
    case 'date-time':
    case 'datetime':
      return timestamp(s);
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(s) ? timestamp(`${s}T00:00:00Z`) : s;
    case 'duration':
      return duration(s);
    case 'byte':
      return bytes(s);
    default:
      return s;
  }
}
