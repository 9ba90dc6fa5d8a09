// Several simulated API servers as one fleet, for the multi-cluster specs.

import type { V1Pod } from '@kubernetes/client-node';
import { BehaviorSubject } from 'rxjs';
import { clusterKey } from '../../src/multicluster/clusterKey.js';
import type { Cluster } from '../../src/multicluster/types.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { pod } from '../helpers/objects.js';

/** Short backoff, so a server that comes back is found again quickly. */
export const fastReflector = { backoff: { initialMs: 20, maxMs: 200, factor: 2, jitter: 0 } };

/** Named simulators and a provider whose set a test changes by hand. */
export class Fleet {
  readonly servers = new Map<string, ApiServer>();
  readonly provider = new BehaviorSubject<readonly Cluster[]>([]);
  // The names the provider gives, in order.
  #members: string[] = [];

  /** Starts one simulator per name, with `pods` pods each (`<name>-p<i>` in default), and gives them all to the provider. */
  static async start(names: readonly string[], pods = 0): Promise<Fleet> {
    const fleet = new Fleet();
    for (const name of names) await fleet.add(name, pods, false);
    fleet.publish();
    return fleet;
  }

  /**
   * Starts a simulator for `name` (seeded with `pods` pods), or takes back the one it had, and, when `publish`,
   * gives the new set to the provider.
   */
  async add(name: string, pods = 0, publish = true): Promise<ApiServer> {
    let server = this.servers.get(name);
    if (server === undefined) {
      server = await startApiServer({ port: 0, bookmarkIntervalMs: 200 });
      for (let i = 0; i < pods; i++) await server.create('v1/pods', pod(`${name}-p${i}`));
      this.servers.set(name, server);
    }
    if (!this.#members.includes(name)) this.#members.push(name);
    if (publish) this.publish();
    return server;
  }

  /** Takes `name` out of the provider's set (its server keeps running). */
  drop(name: string): void {
    this.#members = this.#members.filter((n) => n !== name);
    this.publish();
  }

  /** Gives the provider's set again: every member, with a fresh KubeConfig each (which must not count as a change). */
  publish(): void {
    this.provider.next(this.#members.map((name) => ({ name, kubeConfig: this.server(name).kubeConfig() })));
  }

  server(name: string): ApiServer {
    const s = this.servers.get(name);
    if (s === undefined) throw new Error(`no server ${name}`);
    return s;
  }

  /** Every pod of the clusters in the provider's set, by multi-cluster key, with its resourceVersion. */
  union(): Map<string, string> {
    const out = new Map<string, string>();
    for (const { name } of this.provider.value) {
      for (const p of this.server(name).list<V1Pod>('v1/pods')) out.set(clusterKey(name, `${p.metadata?.namespace}/${p.metadata?.name}`), p.metadata?.resourceVersion ?? '');
    }
    return out;
  }

  async close(): Promise<void> {
    this.provider.complete();
    await Promise.all([...this.servers.values()].map((s) => s.close()));
  }
}
