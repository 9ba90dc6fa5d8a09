// Bench 2 — decoding a LIST body: rxkube's streaming ListDecoder against
// the whole-body way (`JSON.parse(Buffer.concat(chunks).toString())`, what a
// client that reads the response as text does).
//
// The body is generated once, in memory, as 64 KiB Buffer chunks (the size
// node:http hands over), so only decoding is measured. Cases run
// interleaved, each repeated, with a full GC before every run.

import { constants } from 'node:buffer';
import { ListDecoder } from 'rxkube/core';
import type { V1Pod } from '@kubernetes/client-node';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { MiB, heapAfterGc, heapAndBuffers } from './lib/heap.js';
import { namespaceOf, storedPod } from './lib/pods.js';
import { row, type Row } from './lib/report.js';
import { summarize } from './lib/stats.js';

const CHUNK = 64 * 1024;
/** Sample memory every this many chunks (1 MiB): cheap enough not to show in the timing. */
const SAMPLE_EVERY = 16;

/** A `{"kind":"PodList",…,"items":[…]}` body of `n` pods, cut into CHUNK-sized Buffers. */
function listBody(n: number): { chunks: Buffer[]; bytes: number } {
  const chunks: Buffer[] = [];
  let cur = Buffer.allocUnsafe(CHUNK);
  let used = 0;
  let bytes = 0;
  const write = (text: string): void => {
    let src = Buffer.from(text, 'utf8');
    bytes += src.length;
    while (src.length > 0) {
      const n = src.copy(cur, used);
      used += n;
      src = src.subarray(n);
      if (used === CHUNK) {
        chunks.push(cur);
        cur = Buffer.allocUnsafe(CHUNK);
        used = 0;
      }
    }
  };
  write(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${n + 1000}"},"items":[`);
  for (let i = 0; i < n; i++) write((i === 0 ? '' : ',') + JSON.stringify(storedPod(i, namespaceOf(i, 20), 1000 + i)));
  write(']}');
  if (used > 0) chunks.push(cur.subarray(0, used));
  return { chunks, bytes };
}

interface Run {
  readonly ms: number;
  /** Highest sampled heap + ArrayBuffer growth over the pre-run baseline, bytes. */
  readonly peak: number;
  /** Heap growth still held after GC with the decoded items alive, bytes. */
  readonly retained: number;
  readonly items: number;
}

type Case = (chunks: readonly Buffer[], sample: () => void) => { items: unknown; count: number };

const cases: Record<string, Case> = {
  'ListDecoder, keep items': (chunks, sample) => {
    const decoder = new ListDecoder<V1Pod>();
    const items: V1Pod[] = [];
    for (let i = 0; i < chunks.length; i++) {
      decoder.push(chunks[i] as Buffer, items);
      if (i % SAMPLE_EVERY === 0) sample();
    }
    decoder.end();
    return { items, count: items.length };
  },
  'ListDecoder, drop items (streaming)': (chunks, sample) => {
    const decoder = new ListDecoder<V1Pod>();
    let items: V1Pod[] = [];
    let count = 0;
    for (let i = 0; i < chunks.length; i++) {
      decoder.push(chunks[i] as Buffer, items);
      count += items.length;
      items = [];
      if (i % SAMPLE_EVERY === 0) sample();
    }
    decoder.end();
    return { items: undefined, count };
  },
  'JSON.parse(Buffer.concat().toString())': (chunks, sample) => {
    const whole = Buffer.concat(chunks as Buffer[]);
    sample();
    const text = whole.toString('utf8');
    sample();
    const list = JSON.parse(text) as { items: V1Pod[] };
    // The moment both the body copies and the objects are alive: the true peak of this way.
    sample();
    return { items: list.items, count: list.items.length };
  },
};

async function measure(fn: Case, chunks: readonly Buffer[]): Promise<Run> {
  const base = await heapAfterGc();
  const baseAll = heapAndBuffers();
  let peak = 0;
  const sample = (): void => {
    const grown = heapAndBuffers() - baseAll;
    if (grown > peak) peak = grown;
  };
  const t0 = performance.now();
  const out = fn(chunks, sample);
  const ms = performance.now() - t0;
  sample();
  const retained = (await heapAfterGc()) - base;
  // Keeps the decoded items reachable until the heap was measured.
  if (out.items === null) throw new Error('unreachable');
  return { ms, peak, retained, items: out.count };
}

export const decode: Benchmark = {
  name: 'decode',
  description: 'LIST body of N pods in 64 KiB chunks: streaming ListDecoder vs JSON.parse of the whole body',
  async run(ctx: Context): Promise<Row[]> {
    const n = ctx.scaled(envNumber('BENCH_DECODE_PODS', 100_000));
    ctx.log(`decode: generating a ${n}-pod list body`);
    const { chunks, bytes } = listBody(n);
    const mb = bytes / 1e6;
    ctx.log(`decode: ${mb.toFixed(1)} MB in ${chunks.length} chunks; ${ctx.repeats} runs per case`);
    // Past V8's longest string the whole-body way cannot run at all; that is the point of the streaming decoder.
    const tooLong = bytes > constants.MAX_STRING_LENGTH;
    const active = Object.entries(cases).filter(([name]) => !(tooLong && name.startsWith('JSON.parse')));
    const runs = new Map<string, Run[]>(active.map(([k]) => [k, []]));
    for (let r = 0; r < ctx.repeats; r++) {
      for (const [name, fn] of active) {
        const run = await measure(fn, chunks);
        if (run.items !== n) throw new Error(`decode: ${name} produced ${run.items} items, expected ${n}`);
        runs.get(name)?.push(run);
        ctx.log(`decode: ${name}: ${run.ms.toFixed(0)} ms, peak +${(run.peak / MiB).toFixed(0)} MiB, retained ${(run.retained / MiB).toFixed(0)} MiB`);
      }
    }
    const rows: Row[] = [];
    const note = `${n} pods, ${mb.toFixed(1)} MB body`;
    for (const [name, rs] of runs) {
      rows.push(row('decode', name, 'throughput', 'MB/s', summarize(rs.map((r) => mb / (r.ms / 1000))), note));
      rows.push(row('decode', name, 'peak extra heap+buffers', 'MiB', summarize(rs.map((r) => r.peak / MiB)), 'sampled; lower bound'));
      rows.push(row('decode', name, 'retained after gc', 'MiB', summarize(rs.map((r) => r.retained / MiB))));
    }
    if (tooLong) {
      rows.push({
        bench: 'decode',
        case: 'JSON.parse(Buffer.concat().toString())',
        metric: 'not run',
        unit: '',
        mean: Number.NaN,
        n: 0,
        note: `body of ${bytes} B exceeds the longest string V8 allows (${constants.MAX_STRING_LENGTH} chars): ERR_STRING_TOO_LONG`,
      });
    }
    return rows;
  },
};
