import { from as asyncFrom, type AsyncIterableX } from 'ix/asynciterable';
import type { InformerEvent } from './InformerEvent.js';
import type { Informer } from './types.js';
import type { HandlerOptions } from './registration.js';

/**
 * `informer.notifications()`: the iterable below as an IxJS AsyncIterableX. rxjs's from() prefers an interop
 * Observable to an async iterator, whose return() would wait for the next event; handing it the informer itself
 * makes unsubscribing from from(notifications()) end at once.
 */
export function notificationsOf<T>(inf: Informer<T>, opts: HandlerOptions): AsyncIterableX<InformerEvent<T>> {
  const iterable = asyncFrom(notificationIterable(inf, opts));
  const interop = (typeof Symbol === 'function' && (Symbol as { observable?: symbol }).observable) || '@@observable';
  Object.defineProperty(iterable, interop, { value: () => inf });
  return iterable;
}

/**
 * Adapts a handler registration to an async iterator: a handler call ends
 * when the consumer pulls the next event, so the registration's buffer
 * policy applies while the loop body runs. Breaking out (or `return()`)
 * removes the registration at once.
 */
export function notificationIterable<T>(inf: Informer<T>, opts: HandlerOptions): AsyncIterable<InformerEvent<T>> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<InformerEvent<T>> {
      const ready: InformerEvent<T>[] = [];
      let waiting: ((r: IteratorResult<InformerEvent<T>>) => void) | undefined;
      let release: (() => void) | undefined;
      let done = false;
      const deliver = (event: InformerEvent<T>): Promise<void> =>
        new Promise<void>((resolve) => {
          release = resolve;
          if (waiting !== undefined) {
            const w = waiting;
            waiting = undefined;
            w({ value: event, done: false });
          } else {
            ready.push(event);
          }
        });
      const reg = inf.addHandler(
        {
          add: (obj, isInInitialList) => deliver({ type: 'add', obj, isInInitialList }),
          update: (oldObj, obj) => deliver({ type: 'update', oldObj, obj }),
          delete: (obj) => deliver({ type: 'delete', obj }),
        },
        opts,
      );
      const finish = (): IteratorResult<InformerEvent<T>> => {
        done = true;
        void reg.remove();
        release?.();
        release = undefined;
        if (waiting !== undefined) {
          const w = waiting;
          waiting = undefined;
          w({ value: undefined, done: true });
        }
        return { value: undefined, done: true };
      };
      // The informer stopping (or an overflow) ends the registration; a consumer waiting then sees the end.
      void reg.done.then(() => {
        done = true;
        if (waiting !== undefined && ready.length === 0) {
          const w = waiting;
          waiting = undefined;
          w({ value: undefined, done: true });
        }
      });
      return {
        next: () => {
          release?.();
          release = undefined;
          const event = ready.shift();
          if (event !== undefined) return Promise.resolve({ value: event, done: false });
          if (done || reg.closed) return Promise.resolve(finish());
          return new Promise((resolve) => (waiting = resolve));
        },
        return: () => Promise.resolve(finish()),
      };
    },
  };
}
