import type { V1Secret } from '@kubernetes/client-node';
import {
  BehaviorSubject,
  defer,
  distinctUntilChanged,
  EMPTY,
  exhaustMap,
  filter,
  finalize,
  from,
  ignoreElements,
  map,
  merge,
  type Observable,
  of,
  ReplaySubject,
  share,
  switchMap,
  tap,
  timer,
} from 'rxjs';
import { reportError } from '../../errors/reportError.js';
import { informer, type Informer } from '../../informer/informer.js';
import { timerDelay } from '../../options/timerDelay.js';
import { kubeSource } from '../../sources/kubeSource.js';
import { CertificateError } from './CertificateError.js';
import { CertificateProvisionError } from './CertificateProvisionError.js';
import type { ResolvedWebhookCertificates } from './options.js';
import { checkKeyMatches, nodeCertificate, privateKey, splitCertificates } from './pem.js';
import { clientsOf, reconcilePass } from './reconcile.js';
import { materialOf } from './secretData.js';
import type { TlsPair } from './tlsPair.js';

/** Passes that raced another writer in a row before backing off: two leaders for a moment settle within a few. */
const MAX_RACES = 5;
const MAX_BACKOFF_MS = 300_000;

const byName = (name: string): { fieldSelector: string } => ({ fieldSelector: `metadata.name=${name}` });

/** The pair a Secret holds, when replicas can serve it; otherwise reported, and undefined (WH-108). */
function servable(secret: V1Secret, where: string): TlsPair | undefined {
  const m = materialOf(secret);
  try {
    if (m.cert === undefined || m.key === undefined) throw new CertificateError('malformed-certificate', `${where} has no tls.crt or tls.key`);
    const [leaf] = splitCertificates(m.cert, `tls.crt of ${where}`);
    checkKeyMatches(nodeCertificate(leaf ?? '', `tls.crt of ${where}`), privateKey(m.key, `tls.key of ${where}`), where);
    return { cert: m.cert, key: m.key };
  } catch (err) {
    if (!(err instanceof CertificateError)) throw err;
    reportError(new CertificateProvisionError('serve', `webhookCertificates: ${err.message}; the webhook server keeps serving the pair it has`, err));
    return undefined;
  }
}

/** What the leader watches: any change to the Secret, the configurations or the CRDs asks for a pass (WH-107). */
function changes(c: ResolvedWebhookCertificates, secrets: Informer<V1Secret>): Observable<unknown> {
  const kc = c.kubeConfig;
  const watched: Observable<unknown>[] = [
    secrets,
    informer(kubeSource(kc, 'admissionregistration.k8s.io/v1/validatingwebhookconfigurations', byName(c.name))),
    informer(kubeSource(kc, 'admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', byName(c.name))),
    ...c.crdNames.map((n) => informer(kubeSource(kc, 'apiextensions.k8s.io/v1/customresourcedefinitions', byName(n)))),
  ];
  return merge(...watched);
}

/**
 * The leader's work while it leads (WH-101…WH-107): a pass at once, then
 * one after every change and at every wake-up a pass asks for; passes never
 * overlap, and changes during a pass make one more. A pass that fails is
 * reported and retried with backoff (1 s doubling to 5 minutes); one that
 * raced another writer is run again at once, a few times.
 */
function leaderPasses(c: ResolvedWebhookCertificates, secrets: Informer<V1Secret>): Observable<never> {
  return defer(() => {
    const clients = clientsOf(c);
    const abort = new AbortController();
    // When the last pass asked to be woken; a new value replaces the timer.
    const wakeAt$ = new BehaviorSubject<number>(Number.POSITIVE_INFINITY);
    // A change came since the current pass read the cluster.
    let pending = false;
    let failures = 0;
    // Since when no bundle was written by this leader: a new CA settles from here too (WH-114).
    let settleFrom = c.scheduler.now();
    const backoff = (n: number): number => c.scheduler.now() + Math.min(1000 * 2 ** (n - 1), MAX_BACKOFF_MS);
    const passes = async (): Promise<number> => {
      let wakeAt = Number.POSITIVE_INFINITY;
      let races = 0;
      while (pending && !abort.signal.aborted) {
        pending = false;
        try {
          const out = await reconcilePass(c, clients, abort.signal, settleFrom);
          failures = 0;
          if (!out.again && out.wroteBundles) settleFrom = c.scheduler.now();
          if (!out.again) wakeAt = out.wakeAt;
          else if (++races <= MAX_RACES) pending = true;
          else wakeAt = backoff(races - MAX_RACES);
        } catch (err) {
          if (abort.signal.aborted) break;
          reportError(err);
          wakeAt = backoff(++failures);
          pending = false;
        }
      }
      return wakeAt;
    };
    const wake$ = wakeAt$.pipe(switchMap((at) => (at === Number.POSITIVE_INFINITY ? EMPTY : timer(timerDelay(at - c.scheduler.now()), c.scheduler))));
    return merge(of('start'), changes(c, secrets), wake$).pipe(
      tap(() => (pending = true)),
      exhaustMap(() => from(passes())),
      // A change that came as the last pass ended found it still running: one more pass, now.
      tap((at) => wakeAt$.next(pending ? c.scheduler.now() : at)),
      ignoreElements(),
      finalize(() => abort.abort()),
    );
  });
}

/**
 * The serving pairs of `webhookCertificates`, for the webhook server
 * (internal to the runner): every replica watches the Secret (an informer
 * with a `metadata.name` field selector) and emits each new pair it holds
 * that can be served; while `leading$` says this replica leads (always,
 * without leader election), it also generates, rotates and writes the
 * Secret and the CA bundles (WH-100…WH-108). Subscriptions share one run,
 * and a late subscriber gets the current pair at once. It errors only when
 * the Secret's informer fails for good (a 400 or 422 nothing can heal);
 * every other failure is reported and retried.
 *
 * @param c the checked `webhookCertificates` options.
 * @param leading$ whether this replica leads, now and at each change.
 * @returns the pairs to serve, the latest replayed.
 */
export function provisionedPairs(c: ResolvedWebhookCertificates, leading$: Observable<boolean>): Observable<TlsPair> {
  return defer(() => {
    const { namespace, name } = c.secret;
    const key = `${namespace}/${name}`;
    const where = `Secret ${key}`;
    const secrets = informer(kubeSource(c.kubeConfig, 'v1/secrets', { namespace, ...byName(name) }), { name: `${where} (webhookCertificates)` });
    const served$ = secrets.pipe(
      map(() => secrets.store.getByKey(key)),
      filter((s): s is V1Secret => s !== undefined),
      distinctUntilChanged((a, b) => a.metadata?.resourceVersion === b.metadata?.resourceVersion),
      map((s) => servable(s, where)),
      filter((p): p is TlsPair => p !== undefined),
      distinctUntilChanged((a, b) => a.cert === b.cert && a.key === b.key),
    );
    const provisioning$ = leading$.pipe(
      distinctUntilChanged(),
      switchMap((leading) => (leading ? leaderPasses(c, secrets) : EMPTY)),
    );
    return merge(served$, provisioning$);
  }).pipe(share({ connector: () => new ReplaySubject<TlsPair>(1), resetOnError: true, resetOnComplete: true, resetOnRefCountZero: true }));
}
