/**
 * `rxkube crd install <module|file>`: server-side apply of each CRD under the
 * field manager `rxkube`, then an informer on CustomResourceDefinitions until
 * every one is `Established`, each named as it becomes so; a CRD whose names
 * are refused, or that is being deleted, fails at once with the condition's
 * reason and message, and the wait is bounded (semantics CR-84…CR-88).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, filter, firstValueFrom, map, merge, of, timeout, type Observable } from 'rxjs';
import { objectClient } from '../client/objectClient.js';
import { printable } from '../errors/printable.js';
import { informer } from '../informer/informer.js';
import { kubeSource } from '../sources/kubeSource.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import { timerDelay } from '../options/timerDelay.js';
import { unwrapTombstone } from '../store/index.js';
import type { KubeObject } from '../store/types.js';
import { duration } from './columns.js';
import type { CrdOptions } from '../crd/crdConversion.js';
import { loadCrdModule } from './crdExports.js';
import { UsageError } from './usage.js';
import { readCrdFile } from './crdManifest.js';
import { writeText } from './terminal.js';

const CRDS = 'apiextensions.k8s.io/v1/customresourcedefinitions';

/** One condition of a CRD's status, as the server writes it. */
interface Condition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
}

type Crd = KubeObject & { readonly status?: { readonly conditions?: readonly Condition[] } };

/**
 * The CRDs a path gives: a module's exported definitions, or the documents of a YAML or JSON file.
 *
 * @param path a `.ts`/`.mts`/`.js`/`.mjs` module or a `.yaml`/`.yml`/`.json` file.
 * @param webhook the conversion webhook a module's definitions with converters get (`--webhook-service`, `--webhook-url`).
 * @returns the CRDs.
 */
export async function crdsFrom(path: string, webhook?: CrdOptions): Promise<Record<string, unknown>[]> {
  if (/\.(m?ts|m?js)$/i.test(path)) return (await loadCrdModule(path, webhook)).map((e) => e.crd);
  if (webhook !== undefined) throw new UsageError(`${printable(path)}: --webhook-service and --webhook-url set the conversion webhook of a module's definitions; a file of CRDs is applied as it is`);
  return readCrdFile(path);
}

/** `NamesAccepted False (PluralConflict): "…"`: a condition as the command names it, escaped. */
export function describeCondition(c: Condition): string {
  const reason = typeof c.reason === 'string' && c.reason !== '' ? ` (${printable(c.reason)})` : '';
  const message = typeof c.message === 'string' && c.message !== '' ? `: ${printable(JSON.stringify(c.message.slice(0, 500)))}` : '';
  return `${printable(String(c.type))} ${printable(String(c.status))}${reason}${message}`;
}

/**
 * Where a CRD stands: established, failed for good (its names refused, or
 * it is being deleted), or still pending with the conditions that say why.
 *
 * @param crd the CRD as the server has it.
 * @returns the verdict and, unless established, the conditions that explain it.
 */
export function crdState(crd: Crd): { readonly state: 'established' | 'failed' | 'pending'; readonly why: string } {
  const conditions = Array.isArray(crd.status?.conditions) ? crd.status.conditions : [];
  const of = (type: string): Condition | undefined => conditions.find((c) => c.type === type);
  if (of('Established')?.status === 'True') return { state: 'established', why: '' };
  const names = of('NamesAccepted');
  if (names?.status === 'False') return { state: 'failed', why: describeCondition(names) };
  const terminating = of('Terminating');
  if (terminating?.status === 'True' || crd.metadata?.deletionTimestamp !== undefined) {
    return { state: 'failed', why: terminating === undefined ? 'it is being deleted' : describeCondition(terminating) };
  }
  const notTrue = conditions.filter((c) => c.status !== 'True');
  return { state: 'pending', why: notTrue.length === 0 ? 'no conditions yet' : notTrue.map(describeCondition).join('; ') };
}

/** Options of {@link installCrds}. */
export interface InstallOptions {
  /** Take over fields another manager owns (`kubectl apply --server-side --force-conflicts`). */
  readonly force: boolean;
  /** ms to wait for every CRD to be Established. */
  readonly timeoutMs: number;
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
}

/**
 * Applies the CRDs and waits until each is Established, naming each as it becomes so.
 *
 * @param kc the cluster.
 * @param crds the CRDs to apply.
 * @param opts force, timeout and where to print.
 * @returns the exit code: 0 when every CRD is Established, 1 otherwise.
 */
export async function installCrds(kc: KubeConfig, crds: readonly Record<string, unknown>[], opts: InstallOptions): Promise<number> {
  const client = objectClient(kc, CRDS, { fieldManager: 'rxkube' });
  const started = Date.now();
  const pending = new Set<string>();
  for (const crd of crds) {
    const name = (crd['metadata'] as { name: string }).name;
    try {
      await client.apply(crd as never, { force: opts.force });
    } catch (err) {
      writeText(opts.err, `error: ${printable(`${name}: ${(err as Error).message}`, { newlines: true })}\n`);
      return 1;
    }
    writeText(opts.out, `customresourcedefinition ${printable(name)} applied\n`);
    pending.add(name);
  }
  // Watched until every one is Established, one fails (names refused, deleted, being deleted), or the time is up.
  const seen = new Map<string, Crd>();
  let lastError: Error | undefined;
  // One informer per CRD, selected by name: a cluster's other CRDs, schemas and all, are not listed to wait for a few.
  const watched = merge(
    ...[...pending].map((name) => informer(kubeSource(kc, CRDS, { fieldSelector: `metadata.name=${name}` }), { name: `crd install ${name}`, onError: (e) => (lastError = e) })),
  );
  // A verdict per event: 1 for a CRD deleted or failed, 0 once none is pending, undefined while waiting.
  const verdict = (e: InformerEvent<KubeObject>): number | undefined => {
    const crd = unwrapTombstone(e.obj) as Crd | undefined;
    const name = crd?.metadata?.name;
    if (crd === undefined || name === undefined || !pending.has(name)) return undefined;
    if (e.type === 'delete') {
      writeText(opts.err, `error: ${printable(name)} was deleted while waiting for it to be Established\n`);
      return 1;
    }
    seen.set(name, crd);
    const { state, why } = crdState(crd);
    if (state === 'pending') return undefined;
    if (state === 'failed') {
      writeText(opts.err, `error: ${printable(name)} is not Established: ${why}\n`);
      return 1;
    }
    pending.delete(name);
    writeText(opts.out, `customresourcedefinition ${printable(name)} established (${duration(Date.now() - started)})\n`);
    return pending.size === 0 ? 0 : undefined;
  };
  const timedOut = (): Observable<number> => {
    const why = [...pending].map((name) => {
      const crd = seen.get(name);
      return `${printable(name)}: ${crd === undefined ? 'not seen' : crdState(crd).why}`;
    });
    const error = lastError === undefined ? '' : `; last error: ${printable(lastError.message, { newlines: true })}`;
    writeText(opts.err, `error: not Established within ${duration(opts.timeoutMs)}: ${why.join('; ')}${error}\n`);
    return of(1);
  };
  const code = watched.pipe(
    map(verdict),
    filter((c) => c !== undefined),
    // An error that ends the informer (one retrying cannot heal) ends the wait with it.
    catchError((err: unknown) => {
      writeText(opts.err, `error: watching CustomResourceDefinitions failed: ${printable(err instanceof Error ? err.message : String(err), { newlines: true })}\n`);
      return of(1);
    }),
    timeout({ first: timerDelay(opts.timeoutMs), with: timedOut }),
  );
  // The first verdict unsubscribes every informer.
  return firstValueFrom(code);
}
