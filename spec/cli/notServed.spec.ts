import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { runCli } from './run.js';

let server: ApiServer;
let dir: string;
let kubeconfig: string;
beforeAll(async () => {
  server = await startApiServer({ port: 0 });
  server.registerResource({ group: 'example.com', version: 'v1', plural: 'websites', kind: 'Website' });
  dir = mkdtempSync(join(tmpdir(), 'rxkube-notserved-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, server.kubeConfig().exportConfig());
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it('rxkube watch on a resource the server does not serve says which, and the name it may mean (CR-130)', async () => {
  const { code, stderr } = await runCli(['watch', 'example.com/v1/website', '--once', '--kubeconfig', kubeconfig, '--timeout', '2s']);
  expect(code).toBe(1);
  expect(stderr).toContain('ResourceNotServedError: list example.com/v1/website: 404 NotFound: example.com/v1 serves no resource "website": did you mean "websites"? is the CRD installed?');
  expect(stderr).toMatch(/did not sync.*ResourceNotServedError/);
});
