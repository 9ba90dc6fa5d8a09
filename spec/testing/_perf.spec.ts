import http from 'node:http';
import { it } from 'vitest';
import { startApiServer } from '../../src/testing/index.js';

it('perf probe', async () => {
  const server = await startApiServer({ history: { maxEvents: 200_000 } });
  let t = performance.now();
  await server.churn({ creates: 100_000, perSecond: Infinity }).done;
  console.log('create 100k', (performance.now() - t).toFixed(0), 'ms');
  t = performance.now();
  const body: string = await new Promise((res) => http.get(`${server.url}/api/v1/pods`, { agent: false }, (r) => { let s = ''; r.setEncoding('utf8'); r.on('data', (c) => (s += c)); r.on('end', () => res(s)); }));
  console.log('list 100k', (performance.now() - t).toFixed(0), 'ms', body.length);
  t = performance.now();
  let pages = 0; let cont = '';
  do {
    const b: any = await new Promise((res) => http.get(`${server.url}/api/v1/pods?limit=500${cont ? '&continue=' + encodeURIComponent(cont) : ''}`, { agent: false }, (r) => { let s = ''; r.setEncoding('utf8'); r.on('data', (c) => (s += c)); r.on('end', () => res(JSON.parse(s))); }));
    cont = b.metadata.continue ?? ''; pages++;
  } while (cont);
  console.log('paged list', pages, (performance.now() - t).toFixed(0), 'ms');
  // watch throughput
  let lines = 0;
  const req = http.get(`${server.url}/api/v1/pods?watch=true&resourceVersion=${server.resourceVersion()}`, { agent: false }, (r) => { r.on('data', (c: Buffer) => { for (const b of c) if (b === 10) lines++; }); });
  await new Promise((r) => setTimeout(r, 100));
  t = performance.now();
  await server.churn({ updates: 100_000, perSecond: Infinity }).done;
  const genMs = performance.now() - t;
  while (lines < 100_000) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - t;
  console.log('100k updates generated in', genMs.toFixed(0), 'ms; delivered in', ms.toFixed(0), 'ms =>', Math.round(100_000 / (ms / 1000)), 'events/s');
  req.destroy();
  await server.close();
}, 120_000);
