/**
 * The bytes of request bodies one server holds at once, over all its connections (WH-84). Each request takes
 * from it as its bytes arrive and gives them back once answered; a request whose next chunk does not fit is
 * refused instead of read. `maxBodyBytes` bounds one body only: 64 connections each holding a body just under
 * it would hold 470 MB.
 */
export class BodyBudget {
  #left: number;

  constructor(max: number) {
    this.#left = max;
  }

  /** A new request's share: bytes taken as they arrive, all given back by `release`. */
  hold(): BodyHold {
    let held = 0;
    return {
      take: (n) => {
        if (n > this.#left) return false;
        this.#left -= n;
        held += n;
        return true;
      },
      release: () => {
        this.#left += held;
        held = 0;
      },
    };
  }
}

/** One request's share of a {@link BodyBudget}. */
export interface BodyHold {
  /** Takes `n` more bytes; false (nothing taken) when the server holds too much already. */
  take(n: number): boolean;
  /** Gives back every byte taken; safe to call again. */
  release(): void;
}
