// Micro-benchmarks of the work queue, with tinybench: add → get → done at
// one priority and over three, and a worker that never awaits I/O (it
// re-adds its item every run), which is where the queue lets the event loop
// turn (a setImmediate after 5 ms or 1000 items without one). A bare
// setImmediate round trip is the reference for what one such turn costs.

import { Bench, type Task } from 'tinybench';
import { LOW_PRIORITY, workQueue } from 'rxkube';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import type { Row } from './lib/report.js';

const BATCH = 1000;

export const queue: Benchmark = {
  name: 'queue',
  description: 'work queue add/get/done by priority, and a worker flood with its event-loop turns (tinybench)',
  async run(ctx: Context): Promise<Row[]> {
    const iterations = ctx.scaled(envNumber('BENCH_QUEUE_BATCHES', 200), 20);
    const bench = new Bench({ time: 0, iterations, warmupTime: 0, warmupIterations: 20 });

    const plain = workQueue<number>({ name: 'plain' });
    bench.add(`workQueue: add + get + done, ${BATCH} items at one priority`, async () => {
      for (let i = 0; i < BATCH; i++) plain.add(i);
      for (let i = 0; i < BATCH; i++) {
        const got = await plain.get();
        if (got.shutdown) throw new Error('queue shut down');
        plain.done(got.item);
      }
    });

    const levels = [0, 10, LOW_PRIORITY];
    const prioritised = workQueue<number>({ name: 'prioritised' });
    bench.add(`workQueue: add + get + done, ${BATCH} items over 3 priorities`, async () => {
      for (let i = 0; i < BATCH; i++) prioritised.add(i, { priority: levels[i % 3] as number });
      for (let i = 0; i < BATCH; i++) {
        const got = await prioritised.get();
        if (got.shutdown) throw new Error('queue shut down');
        prioritised.done(got.item);
      }
    });

    // One worker whose work is synchronous and re-adds its item: every get() finds it ready at once.
    const flood = workQueue<string>({ name: 'flood' });
    let runs = 0;
    let target = 0;
    let reached: (() => void) | undefined;
    const worker = flood
      .process((item) => {
        if (++runs < target) flood.add(item);
        else reached?.();
      })
      .subscribe();
    bench.add(`workQueue: process() flood, ${BATCH} runs of a synchronous worker`, async () => {
      const done = new Promise<void>((resolve) => (reached = resolve));
      target = runs + BATCH;
      flood.add('a');
      await done;
    });

    bench.add(`setImmediate round trip ×${BATCH} (reference)`, async () => {
      for (let i = 0; i < BATCH; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    });

    ctx.log(`queue: running ${bench.tasks.length} tasks, ${iterations} batches each`);
    await bench.run();
    worker.unsubscribe();
    for (const q of [plain, prioritised, flood]) q.shutDown();
    return bench.tasks.flatMap((task) => toRows(task, BATCH));
  },
};

function toRows(task: Task, ops: number): Row[] {
  const r = task.result;
  if (r.state !== 'completed') throw new Error(`queue: task ${task.name} ${r.state}${'error' in r ? `: ${String(r.error)}` : ''}`);
  const lat = r.latency;
  const ns = (ms: number): number => (ms * 1e6) / ops;
  return [
    { bench: 'queue', case: task.name, metric: 'throughput', unit: 'items/s', mean: (ops * 1000) / lat.mean, rme: lat.rme, n: lat.samplesCount },
    { bench: 'queue', case: task.name, metric: 'time per item', unit: 'ns', mean: ns(lat.mean), p50: ns(lat.p50), p99: ns(lat.p99), rme: lat.rme, n: lat.samplesCount, note: `percentiles over ${ops}-item batches` },
  ];
}
