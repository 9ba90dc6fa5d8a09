// One replica of a sharded controller, run as its own Node process by the specs: it imports the built
// package, joins on a "join" command read from stdin (one JSON object per line), and writes every reconcile's
// start and end, and every membership and hand-over event, as a JSON line { t, id, event, … } on stdout, t on
// the machine's wall clock in ms.
import { createInterface } from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';
import { informer, kubeSource } from '../../dist/index.js';
import { shardedController } from '../../dist/sharding/index.js';
import { Rng } from '../helpers/random.ts';

const name = process.argv[2] ?? `replica-${process.pid}`;
const now = () => performance.timeOrigin + performance.now();
// Pipes are written synchronously on Linux, so a line is out before the next thing happens (or a SIGKILL).
const say = (event, extra = {}) => process.stdout.write(`${JSON.stringify({ t: now(), id: name, event, ...extra })}\n`);

let running;
// This replica's informer over its share, as the API server filters it.
let cache;

function join(cmd) {
  const kc = new KubeConfig();
  kc.loadFromString(cmd.kubeconfig);
  // The specs' one seeded generator (Node runs the TypeScript helper as it is), so the work's durations replay from the seed.
  const durations = new Rng(cmd.seed);
  running = shardedController({
    kc,
    resource: 'v1/configmaps',
    namespace: cmd.namespace,
    controller: cmd.controller,
    identity: name,
    leaseNamespace: cmd.leaseNamespace,
    leaseDuration: cmd.leaseDuration,
    renewDeadline: cmd.renewDeadline,
    retryPeriod: cmd.retryPeriod,
    concurrency: cmd.concurrency,
    resyncPeriod: cmd.resyncPeriod,
    source: (labelSelector) => (cache = informer(kubeSource(kc, 'v1/configmaps', { namespace: cmd.namespace, labelSelector }))),
    reconcile: async (cm, ctx) => {
      say('start', { key: ctx.key });
      // The work: a while, ended early if the replica stops being a member.
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, durations.next() * cmd.workMs);
        ctx.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
      });
      say('end', { key: ctx.key });
    },
    onError: (err) => say('error', { name: err.name, message: err.message }),
  }).subscribe((e) => {
    if (e.type === 'member') say('member', { member: e.member });
    else if (e.type === 'sharder') say('sharder', { leading: e.leading });
    else if (e.type === 'released') say('released', { key: e.key });
    else if (e.type === 'sharding' && e.event.type === 'fenced') say('fenced', { shard: e.event.shard });
  });
  say('joined');
}

createInterface({ input: process.stdin }).on('line', (text) => {
  try {
    const cmd = JSON.parse(text);
    if (cmd.op === 'join') join(cmd);
    else if (cmd.op === 'cache') say('cache', { keys: cache === undefined ? [] : [...cache.store.listKeys()].sort() });
    else if (cmd.op === 'exit') {
      running?.unsubscribe();
      say('left');
      // The graceful leave (drain, then release) keeps the process alive until it is done.
      process.stdin.destroy();
    }
  } catch (err) {
    say('error', { name: 'ReplicaError', message: String(err) });
  }
});
say('ready');
