// One replica of a leader election, run as its own Node process by the specs: it imports the built package
// and runs one elector per "join" command read from stdin (one JSON object per line), writing every
// callback as a JSON line { t, run, id, event } on stdout, t on the machine's wall clock in ms.
import { createInterface } from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';
import { leaderElection, leaseLock } from '../../dist/leaderelection/index.js';

const name = process.argv[2] ?? `replica-${process.pid}`;
const now = () => performance.timeOrigin + performance.now();
// Pipes are written synchronously on Linux, so a line is out before the next thing happens (or a SIGKILL).
const say = (run, event, extra = {}) => process.stdout.write(`${JSON.stringify({ t: now(), run, id: name, event, ...extra })}\n`);

/** Running electors by run name. */
const electors = new Map();

function join(cmd) {
  const kc = new KubeConfig();
  kc.loadFromString(cmd.kubeconfig);
  const run = cmd.run;
  const sub = leaderElection({
    lock: leaseLock(kc, { namespace: cmd.namespace, name: cmd.lease, timeoutMs: 10_000 }),
    identity: name,
    leaseDuration: cmd.leaseDuration,
    renewDeadline: cmd.renewDeadline,
    retryPeriod: cmd.retryPeriod,
    releaseOnCancel: cmd.releaseOnCancel === true,
    onStartedLeading: () => say(run, 'started'),
    onStoppedLeading: () => say(run, 'stopped'),
    onNewLeader: (leader) => say(run, 'leader', { leader }),
    onError: (err) => say(run, 'error', { name: err.name, message: err.message }),
  }).subscribe();
  electors.set(run, sub);
  say(run, 'joined');
}

function leave(cmd) {
  electors.get(cmd.run)?.unsubscribe();
  electors.delete(cmd.run);
  say(cmd.run, 'left');
}

createInterface({ input: process.stdin }).on('line', (text) => {
  try {
    const cmd = JSON.parse(text);
    if (cmd.op === 'join') join(cmd);
    else if (cmd.op === 'leave') leave(cmd);
    else if (cmd.op === 'exit') {
      for (const run of [...electors.keys()]) leave({ run });
      // Releases in flight keep the process alive until they are answered.
      process.stdin.destroy();
    }
  } catch (err) {
    say(undefined, 'error', { name: 'ReplicaError', message: String(err) });
  }
});
say(undefined, 'ready');
