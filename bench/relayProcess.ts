// A TCP relay in its own process, between a benchmark's client and server: it
// counts the connections and bytes that cross it and can limit its bandwidth,
// standing for the network between a controller and its API server. Its own
// CPU shows up in neither the client's figures nor the server's.
//
// Started by a benchmark with child_process.fork and `--target=<port>`; posts
// { event: 'ready', port } and serves 'stats', 'rate' and 'close' over IPC.

import { startTcpProxy } from '../spec/helpers/tcpProxy.js';
import { post, serve } from './lib/ipc.js';

/** What the relay has seen so far. */
export interface RelayStats {
  readonly accepted: number;
  readonly open: number;
  readonly bytesToClients: number;
  readonly bytesToServer: number;
}

/** The relay's ready message. */
export interface RelayReady {
  readonly event: 'ready';
  readonly port: number;
}

const target = Number(process.argv.find((a) => a.startsWith('--target='))?.slice('--target='.length));
if (!Number.isSafeInteger(target) || target <= 0) throw new TypeError(`--target: expected a port, got ${process.argv.join(' ')}`);
const relay = await startTcpProxy(target);
serve({
  stats: (): RelayStats => ({ accepted: relay.accepted, open: relay.open, bytesToClients: relay.bytesToClients, bytesToServer: relay.bytesToServer }),
  rate: (args: { bytesPerSecond?: number }) => {
    relay.setRate(args.bytesPerSecond);
    return true;
  },
  close: async () => {
    await relay.close();
    return true;
  },
});
await post({ event: 'ready', port: relay.port } satisfies RelayReady);
