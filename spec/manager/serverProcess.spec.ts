/**
 * The runner's servers in a process of their own, as in a pod, where an unhandled rejection ends the process:
 * the request-targets that killed it (`//[`, `http://[`) are answered 400 and it stays up (HI-1, HI-2); and
 * under a low file limit, with hundreds of idle and slow connections opened on its probe port, the connection
 * cap (HI-4) keeps it inside its descriptors, so the probe that comes after them is answered. Without a cap,
 * the idle connections use up the descriptors and the probe is accepted and dropped.
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseResponses, sendRaw } from '../helpers/rawHttp.js';
import { waitFor } from '../helpers/waitFor.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The package as built by the test run's global setup.
const dist = (path: string): string => JSON.stringify(new URL(`../../dist/${path}`, import.meta.url).href);

// A simulator and a manager serving probes on loopback; prints the probe port, then runs until killed.
const script = `
  import { informer, kubeSource, manager } from ${dist('index.js')};
  import { startApiServer } from ${dist('testing/index.js')};
  const server = await startApiServer({ port: 0 });
  const configMaps = informer(kubeSource(server.kubeConfig(), 'v1/configmaps'));
  manager({ controllers: [], informers: [configMaps], healthProbeBindAddress: '127.0.0.1:0' }).subscribe({
    next: (e) => e.type === 'serving' && process.stdout.write(JSON.stringify({ port: e.port }) + '\\n'),
    error: (err) => { console.error(String(err)); process.exit(1); },
  });
`;

const sockets: Socket[] = [];
let child: ReturnType<typeof spawn> | undefined;

afterEach(() => {
  for (const s of sockets) s.destroy();
  sockets.length = 0;
  child?.kill('SIGKILL');
  child = undefined;
});

/** The runner in a process of its own, its file limit lowered to `files` when given (by the shell, which then becomes Node); resolves its probe port once healthy. */
async function runner(files?: number): Promise<{ port: number; exited: () => number | string | null | undefined; stderr: () => string }> {
  const limit = files === undefined ? '' : `ulimit -n ${files} && `;
  const c = spawn('/bin/sh', ['-c', `${limit}exec "$0" --input-type=module -e "$1"`, process.execPath, script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  child = c;
  let stdout = '';
  let stderr = '';
  let exited: number | string | null | undefined;
  c.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
  c.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  c.on('exit', (code, signal) => (exited = code ?? signal));
  const port = await waitFor(() => (/\{"port":(\d+)\}/.exec(stdout)?.[1] ?? (exited !== undefined && 'exited')), 'the probe server', 30_000);
  expect(port, stderr).not.toBe('exited');
  const r = { port: Number(port), exited: () => exited, stderr: () => stderr };
  await waitFor(async () => (await get(r.port, '/healthz')) === 200, 'a healthy start');
  return r;
}

/** As the kubelet probes: a new connection each time (a pooled keep-alive one would dodge the cap). */
async function get(port: number, target: string): Promise<number | string> {
  const x = await sendRaw(port, [`GET ${target} HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n`], 'open');
  return parseResponses(x.received)[0]?.status ?? `no answer (${x.error ?? 'closed'})`;
}

describe('manager servers in a process of their own', () => {
  it('answers 400 to //[ and http://[ and stays up', async () => {
    const r = await runner();
    expect(await get(r.port, '//[')).toBe(400);
    expect(await get(r.port, 'http://[')).toBe(400);
    expect(await get(r.port, '//x:99999/')).toBe(404);
    expect(await get(r.port, '/healthz')).toBe(200);
    expect(r.exited(), r.stderr()).toBeUndefined();
  });
});

describe('manager servers: the connection cap', () => {
  it('answers a probe after 300 idle or slow connections under a file limit of 128, and stays up', async () => {
    const r = await runner(128);
    const port = r.port;
    const probe = (): Promise<number | string> => get(port, '/healthz');

    // Connections that never send a byte, and slow ones that send the start of their headers and no more; each
    // settled once it connected or was closed.
    let settled = 0;
    let closedByServer = 0;
    for (let i = 0; i < 300; i++) {
      const s = connect({ port: Number(port), host: '127.0.0.1' });
      let counted = false;
      const settle = (): void => {
        if (!counted) settled++;
        counted = true;
      };
      s.once('connect', () => {
        if (i % 2 === 1) s.write('GET /healthz HTTP/1.1\r\nHost: pod\r\nX-Slow: ');
        settle();
      });
      s.once('close', () => {
        settle();
        closedByServer++;
      });
      s.on('error', () => undefined);
      sockets.push(s);
    }
    await waitFor(() => settled === 300, 'every connection to be accepted or closed', 30_000);

    expect(await probe(), r.stderr()).toBe(200);
    // The idle ones were pushed out, oldest first, down to the cap.
    await waitFor(() => closedByServer >= 300 - 64, `idle connections to be closed down to the cap (${closedByServer} so far)`);
    expect(r.exited(), r.stderr()).toBeUndefined();
  });
});
