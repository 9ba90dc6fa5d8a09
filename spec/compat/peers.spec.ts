import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The oldest peer versions package.json claims; the newest are what the rest of the suite runs on.
const OLDEST = { rxjs: '7.8.0', '@kubernetes/client-node': '2.0.0' };

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const work = mkdtempSync(join(tmpdir(), 'rxkube-peers-'));
const npm = (args: string[], cwd: string): string =>
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed package with the oldest peer dependencies it claims', () => {
  it('installs, typechecks a consumer without type clashes, and syncs an informer', () => {
    npm(['pack', '--silent', '--pack-destination', work], root);
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const app = join(work, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { rxkube: `file:../${tarball}`, ...OLDEST, '@types/node': '^24.10.0' } }),
    );
    npm(['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], app);
    const installed = (name: string): string => JSON.parse(npm(['ls', name, '--json'], app)).dependencies[name].version as string;
    expect(installed('rxjs')).toBe(OLDEST.rxjs);
    expect(installed('@kubernetes/client-node')).toBe(OLDEST['@kubernetes/client-node']);
    writeFileSync(
      join(app, 'consumer.ts'),
      `import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { filter, firstValueFrom } from 'rxjs';
import { informer, kubeSource, type Informer } from 'rxkube';
import { startApiServer } from 'rxkube/testing';

const server = await startApiServer({ port: 0 });
await server.create('v1/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'default' }, spec: { containers: [] } });
const kc: KubeConfig = server.kubeConfig();
const pods: Informer<V1Pod> = informer(kubeSource(kc, 'v1/pods'));
const first = await firstValueFrom(pods.pipe(filter((e) => e.type === 'add')));
console.log('synced', first.type === 'add' ? first.obj.metadata?.name : '');
await server.close();
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'es2023', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: true, types: ['node'] }, files: ['consumer.ts'] }),
    );
    const typecheck = spawnSync(process.execPath, [tsc, '-p', app], { cwd: app, encoding: 'utf8' });
    expect(typecheck.stdout + typecheck.stderr).toBe('');
    const out = execFileSync(process.execPath, [join(app, 'consumer.js')], { cwd: app, encoding: 'utf8' });
    expect(out.trim()).toBe('synced a');
  }, 240_000);
});
