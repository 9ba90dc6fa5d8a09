import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../src/testing/index.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.js';

/** A simulator behind a TCP relay that counts the connections clients open to it. */
export interface Relayed {
  readonly server: ApiServer;
  /** Counts connections on the wire (each a TLS handshake when TLS is on), whatever the client's pooling does. */
  readonly relay: TcpProxy;
  /** A kubeconfig that reaches the simulator through the relay, changed by `cluster` and `user`. */
  kubeConfig(change?: { readonly cluster?: Partial<Cluster>; readonly user?: Partial<User> }): KubeConfig;
  close(): Promise<void>;
}

/** Starts a simulator with `options` and a relay in front of it. */
export async function startRelayed(options: ApiServerOptions = {}): Promise<Relayed> {
  const server = await startApiServer(options);
  const relay = await startTcpProxy(server.port);
  return {
    server,
    relay,
    kubeConfig(change = {}) {
      const base = server.kubeConfig();
      const cluster = base.getCurrentCluster();
      const user = base.getCurrentUser();
      if (cluster === null || user === null) throw new Error('the simulator kubeconfig has no cluster or user');
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ ...cluster, server: cluster.server.replace(`:${server.port}`, `:${relay.port}`), ...change.cluster }],
        users: [{ ...user, ...change.user }],
        contexts: base.contexts,
        currentContext: base.currentContext,
      });
      return kc;
    },
    async close() {
      await relay.close();
      await server.close();
    },
  };
}
