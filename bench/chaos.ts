// The chaos suite from the command line: `npm run chaos -- --seeds 5000`.
//
//   npm run chaos -- --seeds 5000                 # seeds 1..5000, 8 at a time
//   npm run chaos -- --seeds 500 --from 10000     # seeds 10000..10499
//   npm run chaos -- --seed 1234                  # one seed, alone, with every failure it found
//   npm run chaos -- --seeds 200 --probe silent-watch --concurrency 4
//   npm run chaos -- --servers 100000 --seed 7      # the runner's ports: 100000 malformed requests from seed 7
//   npm run chaos -- --hostile --seeds 500        # the hostile-server tier (spec/hostile/README.md), seeds 1..500
//   npm run chaos -- --hostile --seed 17          # one hostile seed, with its plan and everything it found
//
// Each seed runs its own simulator (spec/chaos/README.md says what a seed does). Progress goes to stderr;
// failing seeds are printed as they fail, each with the command that replays it, and the convergence table
// per fault kind at the end. The exit code is 1 when a seed failed, a rejection went unhandled, or timers or
// sockets were left behind.

import { parseArgs } from 'node:util';
import { replayCommand, summarize } from '../spec/chaos/report.js';
import { runSeeds } from '../spec/chaos/runner.js';
import { FAULT_KINDS } from '../spec/chaos/faults.js';
import { fuzzServers } from '../spec/fuzz/fuzzServers.js';
import { replayCommand as hostileReplay, summarizeHostile } from '../spec/hostile/report.js';
import { runHostileSeeds } from '../spec/hostile/runner.js';

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`--${name}: expected a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    seed: { type: 'string' },
    from: { type: 'string' },
    concurrency: { type: 'string' },
    probe: { type: 'string' },
    servers: { type: 'string' },
    hostile: { type: 'boolean' },
  },
  strict: true,
});

const single = values.seed === undefined ? undefined : positiveInt('seed', values.seed, 0);
const count = positiveInt('seeds', values.seeds, 100);
const from = positiveInt('from', values.from, 1);
const seeds = single !== undefined ? [single] : Array.from({ length: count }, (_, i) => from + i);
const concurrency = Math.max(1, positiveInt('concurrency', values.concurrency, single !== undefined ? 1 : values.hostile === true ? 2 : 8));
// The runner's probe and metrics servers under seeded malformed requests, instead of the seeds above.
if (values.servers !== undefined) {
  const cases = positiveInt('servers', values.servers, 0);
  const seed = single ?? from;
  process.stderr.write(`chaos: ${cases} malformed requests from seed ${seed} at the runner's servers\n`);
  const r = await fuzzServers({ seed, cases, concurrency: positiveInt('concurrency', values.concurrency, 16) });
  console.log(`outcomes ${JSON.stringify(r.outcomes)}\n${r.failures.length === 0 ? 'PASS' : `FAIL\n${r.failures.join('\n')}`}`);
  process.exit(r.failures.length === 0 ? 0 : 1);
}
if (values.probe !== undefined && !FAULT_KINDS.some((k) => k.name === values.probe)) {
  throw new TypeError(`--probe: expected one of ${FAULT_KINDS.map((k) => k.name).join(', ')}, got ${JSON.stringify(values.probe)}`);
}

if (values.hostile === true) {
  // Each hostile seed is a process of its own, busy with CPU more than waiting: two at a time by default.
  process.stderr.write(`chaos --hostile: ${seeds.length} seeds from ${seeds[0]}, ${concurrency} at a time\n`);
  const began = Date.now();
  const results = await runHostileSeeds(seeds, concurrency, (r) => {
    if (r.problems.length > 0) process.stderr.write(`FAIL seed ${r.seed}: ${r.problems.map((p) => p.group).join('; ')}\n  replay: ${hostileReplay(r.seed)}\n`);
    else process.stderr.write(`ok seed ${r.seed} (${Math.round(r.durationMs / 1000)} s, ${r.peakRssMiB} MiB)\n`);
  });
  if (single !== undefined) console.log(JSON.stringify(results[0], null, 2));
  console.log(summarizeHostile(results));
  console.log(`wall time ${Math.round((Date.now() - began) / 1000)} s, node ${process.version}`);
  process.exit(results.some((r) => r.problems.length > 0) ? 1 : 0);
}

process.stderr.write(`chaos: ${seeds.length} seeds from ${seeds[0]}, ${concurrency} at a time${values.probe !== undefined ? `, probe ${values.probe}` : ''}\n`);
const started = Date.now();
let done = 0;
const report = await runSeeds({
  seeds,
  concurrency,
  ...(values.probe !== undefined && { probe: values.probe }),
  onResult: (r) => {
    done++;
    if (r.failures.length > 0) {
      process.stderr.write(`\nFAIL seed ${r.seed} (probe ${r.probe.kind}):\n${r.failures.map((f) => `  - ${f}`).join('\n')}\n  replay: ${replayCommand(r.seed)}\n`);
    } else if (done % 50 === 0 || seeds.length <= 20) {
      process.stderr.write(`${done}/${seeds.length} seeds (${Math.round((Date.now() - started) / 1000)} s)\n`);
    }
  },
});

if (single !== undefined) console.log(JSON.stringify(report.results[0], null, 2));
console.log(summarize(report.results));
console.log(`wall time ${Math.round((Date.now() - started) / 1000)} s, node ${process.version}`);
if (report.unhandled.length > 0) console.log(`unhandled rejections:\n${report.unhandled.map((u) => `  ${u}`).join('\n')}`);
if (report.leaks.length > 0) {
  console.log(`left behind after every seed tore down: ${report.leaks.join(', ')}${concurrency > 1 ? ' (run the failing seeds with --concurrency 1 to find which leaked)' : ''}`);
}
const failed = report.results.some((r) => r.failures.length > 0) || report.unhandled.length > 0 || report.leaks.length > 0;
process.exitCode = failed ? 1 : 0;
