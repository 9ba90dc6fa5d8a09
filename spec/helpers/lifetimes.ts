import type { Subscription } from 'rxjs';
import type { Informer } from '../../src/informer/informer.js';
import type { Registration } from '../../src/informer/registration.js';

/**
 * What a spec started through the informers it tracks: every subscription and handler registration made on them,
 * so `end()` (in afterEach) unsubscribes them all and no informer goes on watching a server that is closing. An
 * informer's lifetime is its subscribers' (LT-80); this is that rule applied to a whole spec's worth of them.
 */
export class Lifetimes {
  #subscriptions: Subscription[] = [];
  #registrations: Registration[] = [];

  /** `inf`, with its `subscribe` and `addHandler` recording what they return. */
  track<I extends Pick<Informer<unknown>, 'subscribe' | 'addHandler'>>(inf: I): I {
    const subscribe = inf.subscribe.bind(inf) as (...args: unknown[]) => Subscription;
    const addHandler = inf.addHandler.bind(inf) as (...args: unknown[]) => Registration;
    Object.assign(inf, {
      subscribe: (...args: unknown[]) => {
        const s = subscribe(...args);
        this.#subscriptions.push(s);
        return s;
      },
      addHandler: (...args: unknown[]) => {
        const r = addHandler(...args);
        this.#registrations.push(r);
        return r;
      },
    });
    return inf;
  }

  /** Unsubscribes everything recorded; resolves once every handler call in progress has finished. */
  async end(): Promise<void> {
    for (const s of this.#subscriptions.splice(0)) s.unsubscribe();
    const registrations = this.#registrations.splice(0);
    for (const r of registrations) r.unsubscribe();
    await Promise.all(registrations.map((r) => r.done));
  }
}
