// Bench 1 — the Indexer: add, update and delete of realistic pods with a
// namespace index and a label index, and an index lookup.
//
// Each tinybench iteration is a batch of BATCH operations on fresh objects
// (JSON.parse'd in beforeEach, outside the timed region), so every add pays
// for deep-freezing a new object exactly as an object from the wire does.

import { Bench, type Task } from 'tinybench';
import { byLabel, byNamespace } from 'rxkube';
import { createIndexer, namespaceIndex, type Indexer } from 'rxkube/core';
import type { V1Pod } from '@kubernetes/client-node';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { namespaceOf, podApp, storedPod } from './lib/pods.js';
import type { Row } from './lib/report.js';

const BATCH = 1000;
const NAMESPACES = 50;

function makeStore(freeze: boolean): Indexer<V1Pod> {
  return createIndexer<V1Pod>({ freeze, indexers: { [namespaceIndex]: byNamespace, app: byLabel('app') } });
}

/** JSON text of pods `from..from+count`, so a batch of fresh objects is one JSON.parse each. */
function podJson(from: number, count: number, rv: number, relabel = false): string[] {
  const out: string[] = [];
  for (let i = from; i < from + count; i++) {
    const pod = storedPod(i, namespaceOf(i, NAMESPACES), rv);
    // A relabelled version moves the object to another `app` index value, the costly kind of update.
    if (relabel) (pod.metadata?.labels as Record<string, string>).app = podApp(i + 1);
    out.push(JSON.stringify(pod));
  }
  return out;
}

function parseAll(texts: readonly string[]): V1Pod[] {
  return texts.map((t) => JSON.parse(t) as V1Pod);
}

export const store: Benchmark = {
  name: 'store',
  description: 'createIndexer add/update/delete of ~3 KB pods, namespace + label indexes',
  async run(ctx: Context): Promise<Row[]> {
    const prefill = ctx.scaled(envNumber('BENCH_STORE_PODS', 20_000), BATCH * 2);
    ctx.log(`store: prefilling ${prefill} pods in ${NAMESPACES} namespaces`);
    const prefillJson = podJson(0, prefill, 1);
    const sample = prefillJson[0] ?? '';
    const stores = { frozen: makeStore(true), plain: makeStore(false) };
    for (const s of Object.values(stores)) for (const t of prefillJson) s.add(JSON.parse(t) as V1Pod);

    // New keys for adds and deletes (deleted again after each batch, so the store size stays put).
    const freshJson = podJson(prefill, BATCH, 2);
    // Two versions of the first BATCH stored pods, alternated so every update changes the label index.
    const updateJson = [podJson(0, BATCH, 3, true), podJson(0, BATCH, 4, false)];

    // A fixed sample count rather than a time budget: tinybench's budget counts only the timed part, so a
    // fast task would run hundreds of iterations, each paying for an untimed JSON.parse of a whole batch.
    const iterations = ctx.scaled(envNumber('BENCH_STORE_BATCHES', 40), 10);
    const bench = new Bench({ time: 0, iterations, warmupTime: 0, warmupIterations: 5 });
    let batch: V1Pod[] = [];
    let flip = 0;
    for (const [label, s] of [
      ['freeze on (default)', stores.frozen],
      ['freeze off', stores.plain],
    ] as const) {
      bench.add(
        `add new key, ${label}`,
        () => {
          for (const p of batch) s.add(p);
        },
        {
          beforeEach: () => void (batch = parseAll(freshJson)),
          afterEach: () => {
            for (const p of batch) s.delete(p);
          },
        },
      );
      bench.add(
        `update (label moves), ${label}`,
        () => {
          for (const p of batch) s.update(p);
        },
        { beforeEach: () => void (batch = parseAll(updateJson[flip++ & 1] ?? [])) },
      );
      bench.add(
        `delete, ${label}`,
        () => {
          for (const p of batch) s.delete(p);
        },
        {
          beforeEach: () => {
            batch = parseAll(freshJson);
            for (const p of batch) s.add(p);
          },
        },
      );
    }
    const perNamespace = Math.round(prefill / NAMESPACES);
    let sink = 0;
    bench.add(`byIndex namespace (~${perNamespace} objects)`, () => {
      for (let i = 0; i < BATCH; i++) sink += stores.frozen.byIndex(namespaceIndex, namespaceOf(i, NAMESPACES)).length;
    });
    ctx.log(`store: running ${bench.tasks.length} tasks, ${BATCH} ops per iteration`);
    await bench.run();
    if (sink === 0) throw new Error('byIndex returned nothing: the namespace index is broken');
    for (const s of Object.values(stores)) {
      if (s.size !== prefill) throw new Error(`store ended with ${s.size} objects, expected ${prefill}`);
    }

    const rows: Row[] = [];
    const note = `${BATCH} ops/batch, store of ${prefill}, pod ${sample.length} B`;
    for (const task of bench.tasks) rows.push(...toRows(task, note));
    return rows;
  },
};

function toRows(task: Task, note: string): Row[] {
  const r = task.result;
  if (r.state !== 'completed') {
    throw new Error(`store: task ${task.name} ${r.state}${'error' in r ? `: ${String(r.error)}` : ''}`);
  }
  const lat = r.latency; // ms per batch
  const usPerOp = (ms: number): number => (ms * 1000) / BATCH;
  return [
    { bench: 'store', case: task.name, metric: 'throughput', unit: 'ops/s', mean: (BATCH * 1000) / lat.mean, rme: lat.rme, n: lat.samplesCount, note },
    { bench: 'store', case: task.name, metric: 'time per op', unit: 'µs', mean: usPerOp(lat.mean), p50: usPerOp(lat.p50), p99: usPerOp(lat.p99), rme: lat.rme, n: lat.samplesCount, note: `percentiles over ${BATCH}-op batches` },
  ];
}
