// Micro-benchmarks of the stages between the decoder and the handler, with
// tinybench: the DeltaFIFO and the ordered FIFO (Modified events and a relist), the per-handler
// buffers (FIFO and coalescing), the informer's fan-out to 10 listeners beside
// rxjs's share(), and an informer fed by an in-memory source delivering to 1
// and 10 handlers with each queue. Objects are parsed outside the timed part.

import { filter, Observable, share, Subject } from 'rxjs';
import { Bench, type Task } from 'tinybench';
import type { V1Pod } from '@kubernetes/client-node';
import { informer, type FifoMode, type ListerWatcher, type Registration, type WatchEvent } from 'rxkube';
import { createIndexer, deltaFifo, orderedFifo, type Deltas, type ReflectorEvent } from 'rxkube/core';
import { envNumber, type Benchmark, type Context } from './lib/context.js';
import { namespaceOf, storedPod } from './lib/pods.js';
import type { Row } from './lib/report.js';

const BATCH = 1000;

/** The per-handler buffer, internal to the package: loaded from the built files beside its entry point. */
interface HandlerBufferLike {
  readonly size: number;
  push(entry: { n: { event: unknown; key: string; isSync: boolean }; initial: boolean }): unknown;
  shift(): unknown;
}
type CreateHandlerBuffer = (policy: 'unbounded' | { coalesce: 'byKey' }) => HandlerBufferLike;

async function loadHandlerBuffer(): Promise<CreateHandlerBuffer> {
  const url = new URL('./informer/handlerBuffer.js', import.meta.resolve('rxkube'));
  return ((await import(url.href)) as { createHandlerBuffer: CreateHandlerBuffer }).createHandlerBuffer;
}

function pods(from: number, count: number, rv: number): V1Pod[] {
  const out: V1Pod[] = [];
  for (let i = from; i < from + count; i++) out.push(JSON.parse(JSON.stringify(storedPod(i, namespaceOf(i, 20), rv))) as V1Pod);
  return out;
}

/** A ListerWatcher over memory: `list` returns the pods; `watch` yields whatever `feed` is given, one event at a time. */
function memorySource(initial: readonly V1Pod[]) {
  const queue: WatchEvent<V1Pod>[] = [];
  let wake: (() => void) | undefined;
  const source: ListerWatcher<V1Pod> = {
    supportsWatchList: false,
    list: async () => ({ metadata: { resourceVersion: '1' }, items: initial }),
    watch: (_opts, signal) => ({
      async *[Symbol.asyncIterator]() {
        while (!signal.aborted) {
          const ev = queue.shift();
          if (ev !== undefined) {
            yield ev;
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      },
    }),
  };
  return {
    source,
    feed(events: readonly WatchEvent<V1Pod>[]): void {
      queue.push(...events);
      const w = wake;
      wake = undefined;
      w?.();
    },
  };
}

export const micro: Benchmark = {
  name: 'micro',
  description: 'deltaFifo, handler buffers, the informer\'s fan-out and informer → handler delivery, per event (tinybench)',
  async run(ctx: Context): Promise<Row[]> {
    const keys = BATCH;
    const relistSize = ctx.scaled(envNumber('BENCH_MICRO_RELIST', 10_000), 1000);
    const iterations = ctx.scaled(envNumber('BENCH_MICRO_BATCHES', 50), 10);
    const bench = new Bench({ time: 0, iterations, warmupTime: 0, warmupIterations: 5 });
    const rows: Row[] = [];

    // deltaFifo: Modified events for known keys, applied to a store by the consumer.
    {
      const store = createIndexer<V1Pod>({ freeze: false });
      for (const p of pods(0, keys, 1)) store.add(p);
      const input = new Subject<ReflectorEvent<V1Pod>>();
      let popped = 0;
      input.pipe(deltaFifo<V1Pod>({ knownObjects: store })).subscribe((d: Deltas<V1Pod>) => {
        for (const delta of d.deltas) store.update(delta.obj as V1Pod);
        popped++;
      });
      const updates = pods(0, keys, 2).map((obj): ReflectorEvent<V1Pod> => ({ type: 'Modified', obj, resourceVersion: '2' }));
      bench.add(`deltaFifo: Modified → Deltas → store (${keys} keys)`, () => {
        for (const ev of updates) input.next(ev);
      });
      const relist = pods(0, relistSize, 3);
      const relistStore = createIndexer<V1Pod>({ freeze: false });
      for (const p of relist) relistStore.add(p);
      const relistInput = new Subject<ReflectorEvent<V1Pod>>();
      relistInput.pipe(deltaFifo<V1Pod>({ knownObjects: relistStore })).subscribe((d) => {
        for (const delta of d.deltas) relistStore.update(delta.obj as V1Pod);
      });
      bench.add(`deltaFifo: Replace of ${relistSize} known objects → store`, () => {
        relistInput.next({ type: 'Replace', items: relist, resourceVersion: '3' });
      });
      void popped;
    }

    // orderedFifo on the same inputs: one item per Modified event, and a relist as one ReplacedAll that the consumer
    // applies with one store.replace (what the informer's ordered mode does, less the notifications).
    {
      const store = createIndexer<V1Pod>({ freeze: false });
      for (const p of pods(0, keys, 1)) store.add(p);
      const input = new Subject<ReflectorEvent<V1Pod>>();
      input.pipe(orderedFifo<V1Pod>({ knownObjects: store })).subscribe((item) => {
        if ('deltas' in item) for (const delta of item.deltas) store.update(delta.obj as V1Pod);
      });
      const updates = pods(0, keys, 2).map((obj): ReflectorEvent<V1Pod> => ({ type: 'Modified', obj, resourceVersion: '2' }));
      bench.add(`orderedFifo: Modified → item → store (${keys} keys)`, () => {
        for (const ev of updates) input.next(ev);
      });
      const relist = pods(0, relistSize, 3);
      const relistStore = createIndexer<V1Pod>({ freeze: false });
      for (const p of relist) relistStore.add(p);
      const relistInput = new Subject<ReflectorEvent<V1Pod>>();
      relistInput.pipe(orderedFifo<V1Pod>({ knownObjects: relistStore })).subscribe((item) => {
        if (!('deltas' in item) && item.type === 'ReplacedAll') relistStore.replace(item.items, item.resourceVersion);
      });
      bench.add(`orderedFifo: Replace of ${relistSize} known objects → store`, () => {
        relistInput.next({ type: 'Replace', items: relist, resourceVersion: '3' });
      });
    }

    // The handler buffers alone: a push and a shift per notification.
    const createHandlerBuffer = await loadHandlerBuffer();
    const updates = pods(0, keys, 4);
    const notes = updates.map((obj, i) => ({ n: { event: { type: 'update', oldObj: obj, obj }, key: `k${i}`, isSync: false }, initial: false }));
    const fifo = createHandlerBuffer('unbounded');
    bench.add(`handler buffer unbounded: push + shift (${BATCH})`, () => {
      for (const e of notes) fifo.push(e);
      while (fifo.shift() !== undefined);
    });
    const coalescing = createHandlerBuffer({ coalesce: 'byKey' });
    const repeated = [...notes, ...notes, ...notes, ...notes];
    bench.add(`handler buffer coalesce byKey: ${repeated.length} pushes over ${BATCH} keys, then drain`, () => {
      for (const e of repeated) coalescing.push(e);
      while (coalescing.shift() !== undefined);
      if (coalescing.size !== 0) throw new Error('coalescing buffer not drained');
    });

    // The informer's fan-out alone, as SharedInformer does it (a list of listeners, sync notifications only to those
    // whose resync is due) against rxjs's share() with a per-subscriber filter: the measured reason it keeps its own.
    for (const via of ['listener list', 'rxjs share() + filter'] as const) {
      const listeners = 10;
      let delivered = 0;
      let emit: (n: (typeof notes)[number]['n']) => void;
      if (via === 'listener list') {
        const list = Array.from({ length: listeners }, () => ({ resyncDue: false, enqueue: () => void delivered++ }));
        emit = (n) => {
          for (const l of list) {
            if (n.isSync && !l.resyncDue) continue;
            l.enqueue();
          }
        };
      } else {
        let next: ((n: (typeof notes)[number]['n']) => void) | undefined;
        const shared = new Observable<(typeof notes)[number]['n']>((s) => void (next = (n) => s.next(n))).pipe(share({ resetOnRefCountZero: true }));
        for (let i = 0; i < listeners; i++) {
          const l = { resyncDue: false };
          shared.pipe(filter((n) => !n.isSync || l.resyncDue)).subscribe(() => void delivered++);
        }
        emit = (n) => next?.(n);
      }
      bench.add(`fan-out: ${BATCH} notifications → ${listeners} listeners, ${via}`, () => {
        for (const e of notes) emit(e.n);
        if (delivered === 0) throw new Error('fan-out delivered nothing');
      });
    }

    // An informer fed from memory: each event goes through reflect, deltaFifo, the store (frozen) and every handler's buffer.
    const stops: (() => Promise<void>)[] = [];
    for (const [fifo, handlers] of [['perKey', 1], ['perKey', 10], ['ordered', 1], ['ordered', 10]] as const satisfies readonly (readonly [FifoMode, number])[]) {
      const initial = pods(0, keys, 1);
      const mem = memorySource(initial);
      const inf = informer<V1Pod>(mem.source, { onError: () => {}, fifo });
      let handled = 0;
      let target = 0;
      let reached: (() => void) | undefined;
      // The handlers' registrations start the informer; unsubscribing them stops it.
      const regs: Registration[] = [];
      for (let h = 0; h < handlers; h++) {
        regs.push(
          inf.addHandler({
            update: () => {
              if (++handled === target) reached?.();
            },
          }),
        );
      }
      await inf.whenSynced({ timeout: 60_000 });
      stops.push(async () => {
        for (const r of regs) r.unsubscribe();
        await Promise.all(regs.map((r) => r.done));
      });
      let rv = 10;
      let batch: WatchEvent<V1Pod>[] = [];
      bench.add(
        `informer${fifo === 'ordered' ? " (fifo: 'ordered')" : ''}: ${BATCH} MODIFIED → ${handlers} handler${handlers > 1 ? 's' : ''}`,
        async () => {
          const done = new Promise<void>((resolve) => (reached = resolve));
          target = handled + BATCH * handlers;
          mem.feed(batch);
          await done;
        },
        {
          beforeEach: () => {
            rv++;
            batch = pods(0, BATCH, rv).map((object) => ({ type: 'MODIFIED', object }));
          },
        },
      );
    }

    ctx.log(`micro: running ${bench.tasks.length} tasks`);
    await bench.run();
    for (const s of stops) await s();
    const perOp = (task: Task): number => (/^(deltaFifo|orderedFifo): Replace/.test(task.name) ? relistSize : task.name.includes('4000') ? repeated.length : BATCH);
    for (const task of bench.tasks) rows.push(...toRows(task, perOp(task)));
    return rows;
  },
};

function toRows(task: Task, ops: number): Row[] {
  const r = task.result;
  if (r.state !== 'completed') throw new Error(`micro: task ${task.name} ${r.state}${'error' in r ? `: ${String(r.error)}` : ''}`);
  const lat = r.latency;
  const us = (ms: number): number => (ms * 1000) / ops;
  return [
    { bench: 'micro', case: task.name, metric: 'throughput', unit: 'ops/s', mean: (ops * 1000) / lat.mean, rme: lat.rme, n: lat.samplesCount },
    { bench: 'micro', case: task.name, metric: 'time per op', unit: 'µs', mean: us(lat.mean), p50: us(lat.p50), p99: us(lat.p99), rme: lat.rme, n: lat.samplesCount, note: `percentiles over ${ops}-op batches` },
  ];
}
