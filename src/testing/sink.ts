import type { ServerResponse } from 'node:http';

/** Where a response body goes: straight to the socket, or slowly through a trickle. */
export interface Sink {
  write(chunk: string): void;
  /** Ends the response once everything written so far is out. */
  end(): void;
  /** Writes `chunk`, then resets the connection as soon as it reached the socket. */
  writeThenReset(chunk: string): void;
}

/** Resets a response's connection abruptly (RST where the platform allows). */
export function resetSocket(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null || socket.destroyed) return;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

/** Writes straight through; node batches what is written within one tick. */
export class DirectSink implements Sink {
  readonly #res: ServerResponse;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  write(chunk: string): void {
    if (!this.#res.writableEnded) this.#res.write(chunk);
  }

  end(): void {
    if (!this.#res.writableEnded) this.#res.end();
  }

  writeThenReset(chunk: string): void {
    if (this.#res.writableEnded) return;
    this.#res.write(chunk, () => resetSocket(this.#res));
  }
}

/** Serves the body `bytesPerChunk` bytes every `intervalMs`: the trickle fault. */
export class TrickleSink implements Sink {
  readonly #res: ServerResponse;
  readonly #bytesPerChunk: number;
  // Bytes waiting for their turn.
  #queue: Buffer = Buffer.alloc(0);
  // What happens once the queue drains: keep going, end, or reset.
  #after: 'open' | 'end' | 'reset' = 'open';
  readonly #timer: NodeJS.Timeout;

  constructor(res: ServerResponse, bytesPerChunk: number, intervalMs: number) {
    this.#res = res;
    this.#bytesPerChunk = bytesPerChunk;
    this.#timer = setInterval(() => this.#pump(), Math.max(1, intervalMs));
    res.once('close', () => clearInterval(this.#timer));
  }

  write(chunk: string): void {
    this.#queue = Buffer.concat([this.#queue, Buffer.from(chunk)]);
  }

  end(): void {
    if (this.#after === 'open') this.#after = 'end';
  }

  writeThenReset(chunk: string): void {
    this.write(chunk);
    this.#after = 'reset';
  }

  #pump(): void {
    if (this.#res.writableEnded || this.#res.destroyed) {
      clearInterval(this.#timer);
      return;
    }
    if (this.#queue.length > 0) {
      const piece = this.#queue.subarray(0, this.#bytesPerChunk);
      this.#queue = this.#queue.subarray(piece.length);
      this.#res.write(piece);
      return;
    }
    if (this.#after === 'open') return;
    clearInterval(this.#timer);
    if (this.#after === 'end') this.#res.end();
    else resetSocket(this.#res);
  }
}
