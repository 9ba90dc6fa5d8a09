import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ErrorProblem } from './checks.js';
import type { SeedOutcome } from './seed.js';
import { HOSTILE } from './seed.js';

/**
 * Runs seeds of the hostile-server tier, each in a child process, and judges
 * what the kernel saw of it: how it ended and its peak resident memory.
 */

export const LIMITS = Object.freeze({
  /**
   * The peak RSS a seed may reach (MiB), server included. Over 50 seeds
   * the median peak was 218 MiB (Node, the library, client-node, the
   * hostile server and its gzip work); the largest buffer the library holds
   * by design is a 64 MiB body, which decoding may hold about three times
   * over (bytes, text, objects): 218 + 3 × 64 ≈ 410, and 512 leaves room
   * for the collector's lag. Anything unbounded (a 2 GiB bomb, an endless
   * body or line) crosses it within a second.
   */
  rssMiB: 512,
  /** Past this the runner kills the seed at once, so one seed cannot take the machine's memory. */
  killRssMiB: 1536,
  /** A seed that has not exited by then is killed and reported as hung. */
  seedMs: HOSTILE.hostileMs + HOSTILE.convergeMs + 40_000,
  /** How often the runner reads the child's memory from /proc. */
  sampleMs: 50,
});

/** What one seed found: problems grouped by the rule they broke (empty: it passed). */
export interface HostileResult {
  readonly seed: number;
  readonly problems: readonly ErrorProblem[];
  readonly peakRssMiB: number;
  readonly outcome: SeedOutcome | undefined;
  /** The hostile answers the server gave, as the child reported them (also when it died). */
  readonly taken: readonly string[];
  /** The first errors the seed reported, as `where: Class: message`, to tell a failure's cause on replay. */
  readonly trace: readonly string[];
  /** Errors the seed reported, by class (also when it died). */
  readonly errors: Readonly<Record<string, number>>;
  readonly durationMs: number;
}

/** Errors kept per seed for the replay's report. */
const TRACE_LINES = 40;

const here = fileURLToPath(import.meta.url);
/** The built child script: beside this file when running from build/, else in build/ (vitest runs the sources). */
const CHILD = here.includes('/build/spec/') ? fileURLToPath(new URL('../../bench/hostileSeed.js', import.meta.url)) : fileURLToPath(new URL('../../build/bench/hostileSeed.js', import.meta.url));

function memory(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? '0');
    return { rss: kib('VmRSS') / 1024, hwm: kib('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/**
 * What killed a process, for grouping: the error line (`TypeError: Invalid URL`) and the first frame in the
 * library (`answer dist/manager/servers.js`), without line numbers or values that differ between seeds.
 */
function causeOfDeath(stderr: string): string {
  const lines = stderr.split('\n');
  const error = lines.find((l) => /^\w*(Error|Exception|Warning)\b.*:/.test(l.trim()) || /^\[?\w+Error/.test(l.trim()))?.trim() ?? 'no error printed';
  const frame = lines.map((l) => /at (?:async )?(\S+) \(.*?\/(dist\/[^:]+)/.exec(l) ?? /at .*?\/(dist\/[^:]+)/.exec(l)).find((m) => m !== null);
  const where = frame === undefined || frame === null ? '' : ` in ${frame.slice(1).join(' ')}`;
  return `${error.replace(/\d{3,}/g, 'N').slice(0, 120)}${where}`;
}

/** The first lines of what a dead process printed, with the stack trimmed to the frames that say where. */
function deathNote(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !l.includes('node:internal') && !/^\s*\^/.test(l));
  return lines.slice(0, 6).join(' | ').slice(0, 600);
}

/** Runs one seed in a child process. */
export function runHostileChild(seed: number): Promise<HostileResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    let killedFor: ErrorProblem | undefined;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    const sampler = setInterval(() => {
      const m = child.pid === undefined ? undefined : memory(child.pid);
      if (m === undefined) return;
      peak = Math.max(peak, m.hwm, m.rss);
      if (m.rss > LIMITS.killRssMiB && killedFor === undefined) {
        killedFor = { group: `RSS over ${LIMITS.rssMiB} MiB`, detail: `killed at ${Math.round(m.rss)} MiB RSS (the runner's ceiling is ${LIMITS.killRssMiB} MiB)` };
        child.kill('SIGKILL');
      }
    }, LIMITS.sampleMs);
    const timer = setTimeout(() => {
      killedFor ??= { group: 'seed hung', detail: `still running after ${LIMITS.seedMs} ms; killed` };
      child.kill('SIGKILL');
    }, LIMITS.seedMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(timer);
      const problems: ErrorProblem[] = [];
      let outcome: SeedOutcome | undefined;
      const early: ErrorProblem[] = [];
      const taken: string[] = [];
      const trace: string[] = [];
      const errors: Record<string, number> = {};
      for (const line of stdout.split('\n')) {
        if (line.trim() === '') continue;
        try {
          const v = JSON.parse(line) as { problem?: ErrorProblem; taken?: string; error?: string } & Partial<SeedOutcome>;
          if (v.problem !== undefined) early.push(v.problem);
          else if (typeof v.taken === 'string') taken.push(v.taken);
          else if (typeof v.error === 'string') {
            if (trace.length < TRACE_LINES) trace.push(v.error);
            const name = /^[^:]+: (\w+): /.exec(v.error)?.[1] ?? 'unknown';
            errors[name] = (errors[name] ?? 0) + 1;
          }
          else if (v.seed !== undefined) outcome = v as SeedOutcome;
        } catch {
          // Not a line of the seed's protocol: something the library printed on stdout, ignored.
        }
      }
      if (killedFor !== undefined) problems.push(killedFor);
      else if (code !== 0 || outcome === undefined) problems.push({ group: `process died: ${causeOfDeath(stderr)}`, detail: `exit ${String(code)}${signal !== null ? ` (${signal})` : ''}: ${deathNote(stderr)}` });
      const peakRss = Math.max(peak, outcome?.maxRssMiB ?? 0);
      if (killedFor === undefined && peakRss > LIMITS.rssMiB) problems.push({ group: `RSS over ${LIMITS.rssMiB} MiB`, detail: `peak ${Math.round(peakRss)} MiB` });
      problems.push(...(outcome?.problems ?? early));
      if (outcome !== undefined) {
        if (stderr.includes(outcome.token)) problems.push({ group: 'credential on stderr', detail: 'the bearer token was printed on stderr' });
        if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u.test(stderr)) problems.push({ group: 'control characters on stderr', detail: JSON.stringify(stderr.slice(0, 200)) });
      }
      resolve({ seed, problems, peakRssMiB: Math.round(peakRss), outcome, taken: outcome?.taken ?? taken, trace, errors, durationMs: Date.now() - started });
    });
  });
}

/** Runs seeds, `concurrency` children at a time, calling `onResult` as each ends. */
export async function runHostileSeeds(seeds: readonly number[], concurrency: number, onResult?: (r: HostileResult) => void): Promise<HostileResult[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  const queue = [...seeds];
  const results: HostileResult[] = [];
  const worker = async (): Promise<void> => {
    for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
      const r = await runHostileChild(seed);
      results.push(r);
      onResult?.(r);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  return results.sort((a, b) => a.seed - b.seed);
}
