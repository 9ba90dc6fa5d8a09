import { resolveReflectOptions } from '../reflector/reflect.js';
import type { ListerWatcher, SourceIdentity } from '../sources/types.js';
import type { InformerOptions } from './types.js';
import { describeValue } from '../options/validate.js';

/**
 * Checks an informer's source and options up front, so a mistake throws at
 * construction rather than from a first subscribe.
 *
 * @returns the informer's name: `opts.name`, else the source's resource name, else `'informer'`.
 */
export function checkInformerOptions<T>(source: ListerWatcher<T>, opts: InformerOptions<T>): string {
  if (source === null || typeof source !== 'object' || typeof source.list !== 'function' || typeof source.watch !== 'function') {
    throw new TypeError(`source must be a ListerWatcher with list() and watch(), got ${describeValue(source)}`);
  }
  checkIdentity(source.identity);
  checkInformerOptionValues(opts);
  return opts.name ?? sourceName(source);
}

/**
 * Checks the options alone, for a caller that must refuse a bad value before
 * it has a source: the factory, before it hands out a shared informer (PF-1).
 */
export function checkInformerOptionValues<T>(opts: InformerOptions<T>): void {
  if (opts === null || typeof opts !== 'object') throw new TypeError(`opts must be an object, got ${describeValue(opts)}`);
  const resync = opts.resyncPeriod ?? 0;
  if (!Number.isFinite(resync) || resync < 0) throw new TypeError(`resyncPeriod must be a non-negative number of ms, got ${describeValue(opts.resyncPeriod)}`);
  if (opts.initialList !== undefined && opts.initialList !== 'paged' && opts.initialList !== 'stream') {
    throw new TypeError(`initialList must be 'paged' or 'stream', got ${describeValue(opts.initialList)}`);
  }
  if (opts.fifo !== undefined && opts.fifo !== 'perKey' && opts.fifo !== 'ordered') {
    throw new TypeError(`fifo must be 'perKey' or 'ordered', got ${describeValue(opts.fifo)}`);
  }
  if (opts.transform !== undefined && typeof opts.transform !== 'function') throw new TypeError(`transform must be a function, got ${describeValue(opts.transform)}`);
  if (opts.onError !== undefined && typeof opts.onError !== 'function') throw new TypeError(`onError must be a function, got ${describeValue(opts.onError)}`);
  if (opts.maxLagMs !== undefined && !(typeof opts.maxLagMs === 'number' && opts.maxLagMs > 0 && opts.maxLagMs !== Number.POSITIVE_INFINITY)) {
    throw new TypeError(`maxLagMs must be a positive number of ms, got ${describeValue(opts.maxLagMs)}`);
  }
  if (opts.name !== undefined && typeof opts.name !== 'string') throw new TypeError(`name must be a string, got ${describeValue(opts.name)}`);
  resolveReflectOptions({ ...opts.reflector });
}

function sourceName(source: ListerWatcher<unknown>): string {
  const resource = (source as { resource?: { name?: unknown } }).resource;
  return typeof resource?.name === 'string' ? resource.name : 'informer';
}

/** A source's identity, when it has one, must name a cluster and a resource (RYW-2). */
function checkIdentity(identity: SourceIdentity | undefined): void {
  if (identity === undefined) return;
  const ok =
    identity !== null &&
    typeof identity === 'object' &&
    typeof identity.cluster === 'string' &&
    identity.cluster !== '' &&
    typeof identity.group === 'string' &&
    typeof identity.version === 'string' &&
    typeof identity.plural === 'string' &&
    identity.plural !== '' &&
    (['namespace', 'labelSelector', 'fieldSelector'] as const).every((k) => identity[k] === undefined || typeof identity[k] === 'string');
  if (!ok) throw new TypeError(`source.identity must be { cluster, group, version, plural, namespace?, labelSelector?, fieldSelector? } of strings, got ${describeValue(identity)}`);
}
