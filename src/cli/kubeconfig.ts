/**
 * Where `rxkube watch` finds its cluster: the library's `loadKubeConfig`
 * order (`--kubeconfig`, the files of $KUBECONFIG, the pod's service
 * account, ~/.kube/config), with its errors as one usage line each and the
 * "nothing found" case worded for the command line (semantics MG-11).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { findKubeConfig } from '../manager/kubeConfig.js';
import { homeKubeConfigPath, KubeConfigLoadError, selectContext, type FoundKubeConfig } from '../manager/kubeConfigFiles.js';
import { UsageError } from './usage.js';

/** Runs `load`, turning what the kubeconfig loader throws into a usage error (one line, exit 1). */
function asUsage<R>(load: () => R): R {
  try {
    return load();
  } catch (err) {
    if (err instanceof KubeConfigLoadError) throw new UsageError(err.message.replace(/^loadKubeConfig: /, ''));
    throw err;
  }
}

/**
 * Loads the kubeconfig the command uses.
 *
 * @param path `--kubeconfig`, if given.
 * @returns the loaded configuration and where it came from.
 * @throws {UsageError} when no configuration is found, or a file named is missing or malformed.
 */
export function loadKubeConfig(path: string | undefined): FoundKubeConfig {
  const found = asUsage(() => findKubeConfig(path === undefined ? {} : { kubeconfig: path }, '--kubeconfig'));
  if (found === undefined) throw new UsageError(`no kubeconfig: ${homeKubeConfigPath()} does not exist and KUBECONFIG is not set; pass --kubeconfig <file>, or try --simulator`);
  return found;
}

/**
 * Makes `context` (else the kubeconfig's current context) the one to use, and
 * checks that it names a cluster.
 *
 * @param loaded the kubeconfig.
 * @param context `--context`, if given.
 * @returns the kubeconfig, its current context set.
 * @throws {UsageError} for a context the kubeconfig does not have, or none at all.
 */
export function useContext(loaded: FoundKubeConfig, context: string | undefined): KubeConfig {
  return asUsage(() => selectContext(loaded, context, '--context'));
}
