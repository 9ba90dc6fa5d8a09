// A reader of the Prometheus text exposition format (version 0.0.4) for specs: families by name, with their type,
// help and samples, so a spec checks what a scraper would see rather than prom-client's objects.
import { spawnSync } from 'node:child_process';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: string;
  help: string;
  readonly samples: Sample[];
}

function unescape(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) labels[m[1]!] = unescape(m[2]!);
  if (re.lastIndex !== 0 && re.lastIndex !== text.length) throw new Error(`bad labels: ${text}`);
  return labels;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  const v = Number(text);
  // Prometheus reads NaN in any case (Go's ParseFloat); prom-client writes an unobserved event-loop lag as `Nan`.
  if (Number.isNaN(v) && text.toLowerCase() !== 'nan') throw new Error(`bad value: ${text}`);
  return v;
}

/** The family a sample belongs to: `x_bucket`, `x_sum`, `x_count` belong to histogram `x`. */
function familyOf(families: Map<string, Family>, sample: string): Family {
  const direct = families.get(sample);
  if (direct !== undefined) return direct;
  const base = sample.replace(/_(bucket|sum|count)$/, '');
  const family = families.get(base);
  if (family === undefined) throw new Error(`sample ${sample} before its # TYPE line`);
  return family;
}

/** Parses exposition text; throws on a line it cannot read. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const declare = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (meta !== null) {
      const f = declare(meta[2]!);
      if (meta[1] === 'HELP') f.help = unescape(meta[3]!);
      else f.type = meta[3]!;
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (sample === null) throw new Error(`cannot read line: ${line}`);
    familyOf(families, sample[1]!).samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? ''), value: parseValue(sample[3]!) });
  }
  return families;
}

/** The family `name`, failing the spec when it is missing. */
export function family(families: Map<string, Family>, name: string): Family {
  const f = families.get(name);
  if (f === undefined) throw new Error(`no family ${name} in the exposition`);
  return f;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string>): number | undefined {
  const f = familyOf(families, name);
  const matches = f.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length > 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matches[0]?.value;
}

/** The path of promtool, when it is installed (spec/e2e/prometheus.sh installs it). */
export function promtoolPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : undefined;
}

/** Runs `promtool check metrics` over `text`: its exit status and what it printed (problems, one a line). */
export function promtoolCheck(promtool: string, text: string): { readonly status: number | null; readonly output: string } {
  const result = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}
