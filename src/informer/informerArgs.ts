import { resolveReflectOptions } from '../operators/reflect.js';
import type { ListerWatcher } from '../sources/types.js';
import type { InformerOptions } from './informer.js';

/** Throws a TypeError naming the first bad argument of `informer()`, so a mistake fails at construction rather than at the first subscribe. */
export function checkInformerArgs<T>(source: ListerWatcher<T>, opts: InformerOptions<T>): void {
  if (source === null || typeof source !== 'object' || typeof source.list !== 'function' || typeof source.watch !== 'function') {
    throw new TypeError(`source must be a ListerWatcher with list() and watch(), got ${String(source)}`);
  }
  if (opts === null || typeof opts !== 'object') throw new TypeError(`opts must be an object, got ${String(opts)}`);
  const resync = opts.resyncPeriod ?? 0;
  if (!Number.isFinite(resync) || resync < 0) throw new TypeError(`resyncPeriod must be a non-negative number of ms, got ${String(opts.resyncPeriod)}`);
  if (opts.initialList !== undefined && opts.initialList !== 'paged' && opts.initialList !== 'stream') {
    throw new TypeError(`initialList must be 'paged' or 'stream', got ${JSON.stringify(opts.initialList)}`);
  }
  if (opts.transform !== undefined && typeof opts.transform !== 'function') throw new TypeError(`transform must be a function, got ${typeof opts.transform}`);
  if (opts.onError !== undefined && typeof opts.onError !== 'function') throw new TypeError(`onError must be a function, got ${typeof opts.onError}`);
  if (opts.name !== undefined && typeof opts.name !== 'string') throw new TypeError(`name must be a string, got ${String(opts.name)}`);
  resolveReflectOptions({ ...opts.reflector });
}

/** The informer's default name: the source's resource name, when it has one. */
export function sourceName(source: ListerWatcher<unknown>): string {
  const resource = (source as { resource?: { name?: unknown } }).resource;
  return typeof resource?.name === 'string' ? resource.name : 'informer';
}
