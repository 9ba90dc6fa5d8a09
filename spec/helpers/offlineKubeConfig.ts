import { KubeConfig } from '@kubernetes/client-node';

/**
 * A kubeconfig whose cluster is never reached (port 1 on loopback): for type tests and for specs that
 * need a KubeConfig value but make no request with it.
 */
export function offlineKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}
