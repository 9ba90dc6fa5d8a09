import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { CliProcess, runCli } from './run.js';

/** kube-apiserver's limit on the nesting of an object's JSON; JSON.stringify overflows the stack at about 4,500. */
const SERVER_DEPTH = 10_000;

let server: ApiServer;
let dir: string;
let kubeconfig: string;

/** How deep the JSON text nests, counted on the text (the parsed value would need a walk of its own). */
function textDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') deepest = Math.max(deepest, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return deepest;
}

beforeAll(async () => {
  server = await startApiServer({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'rxkube-deep-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  const extra: Record<string, unknown> = {};
  let at = extra;
  // The ConfigMap, `extra` and 9,998 levels under it: 10,000 in all.
  for (let i = 2; i < SERVER_DEPTH; i++) at = at['a'] = {} as Record<string, unknown>;
  await server.create('v1/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep', namespace: 'default' }, extra });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe(`rxkube watch -o json prints an object nested ${SERVER_DEPTH} deep`, { timeout: 60_000 }, () => {
  it('--once', async () => {
    const { code, stdout, stderr } = await runCli(['watch', 'configmaps', '-n', 'default', '--once', '-o', 'json', '--kubeconfig', kubeconfig]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const line = stdout.trimEnd();
    expect(line.split('\n')).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({ type: 'add', key: 'default/deep' });
    // The event line wraps the object in one more level.
    expect(textDepth(line)).toBe(SERVER_DEPTH + 1);
  });

  it('live, as events come', async () => {
    const cli = new CliProcess(['watch', 'configmaps', '-n', 'default', '-o', 'json', '--kubeconfig', kubeconfig]);
    let result;
    try {
      await cli.waitFor((out) => out.endsWith('\n') && out.includes('"key":"default/deep"'));
    } finally {
      result = await cli.stop();
    }
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(textDepth(result.stdout.trimEnd())).toBe(SERVER_DEPTH + 1);
  });
});
