/**
 * Runs one example by name: `npm run example <name> -- [--simulator] [--duration 10s]`.
 * Each example is also a program of its own under build/examples/.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.js') && f !== 'run.js')
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (name === undefined || name === '--help' || !existsSync(`${here}${name}.js`)) {
  console.error(`usage: npm run example <name> -- [--simulator] [--duration 10s]\nexamples: ${available.join(', ')}`);
  process.exit(name === undefined || name === '--help' ? 0 : 2);
}
const child = spawn(process.execPath, [`${here}${name}.js`, ...args], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 130)));
