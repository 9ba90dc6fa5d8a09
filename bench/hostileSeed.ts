// One seed of the hostile-server tier in a process of its own (spec/hostile/README.md): started by the tier's
// runner as `node build/bench/hostileSeed.js <seed>`, it prints a JSON line per problem and per hostile answer as they happen, then one with everything the seed found, and exits 0.
// Dying, any other exit code, or no line at all is what the runner reports as a crash.

import { runHostileSeed } from '../spec/hostile/seed.js';

const seed = Number(process.argv[2]);
if (!Number.isSafeInteger(seed) || seed < 0) throw new TypeError(`seed: expected a non-negative integer, got ${JSON.stringify(process.argv[2])}`);
const outcome = await runHostileSeed(seed, (line) => process.stdout.write(`${JSON.stringify(line)}\n`));
process.stdout.write(`${JSON.stringify(outcome)}\n`, () => process.exit(0));
