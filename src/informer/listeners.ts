import type { Subscriber } from 'rxjs';
import type { InformerEvent } from '../operators/informerEvent.js';
import type { Notification } from './notification.js';

/** Anything the informer delivers to: an Observable subscriber, or a handler registration. */
export interface Listener<T> {
  enqueue(n: Notification<T>): void;
  /** Whether sync updates (resync, unchanged relist) go to it now. */
  readonly resyncDue: boolean;
}

/** A subscriber of the informer itself: events go straight to it, in the informer's turn. */
export class ObserverListener<T> implements Listener<T> {
  readonly resyncDue = false;
  readonly subscriber: Subscriber<InformerEvent<T>>;
  constructor(subscriber: Subscriber<InformerEvent<T>>) {
    this.subscriber = subscriber;
  }
  enqueue(n: Notification<T>): void {
    if (!n.isSync) this.subscriber.next(n.event);
  }
}
