import type { ServerResponse } from 'node:http';
import { constants as http2Constants } from 'node:http2';
import { timerDelay } from '../../options/timerDelay.js';

/** Where a response body goes: straight to the socket, or slowly through a trickle. */
export interface Sink {
  write(chunk: string | Buffer): void;
  /** Ends the response once everything written so far is out. */
  end(): void;
  /** Writes `chunk`, then resets the connection as soon as it reached the socket. */
  writeThenReset(chunk: string): void;
}

/** Resets a response's connection abruptly (RST where the platform allows); over HTTP/2, its stream (RST_STREAM). */
export function resetSocket(res: ServerResponse): void {
  const stream = (res as { stream?: { close(code: number): void; destroyed: boolean } }).stream;
  if (stream !== undefined) {
    if (!stream.destroyed) stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
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

  write(chunk: string | Buffer): void {
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
  // Chunks waiting for their turn; the first may be partly sent already.
  #queue: Buffer[] = [];
  // What happens once the queue drains: keep going, end, or reset.
  #after: 'open' | 'end' | 'reset' = 'open';
  readonly #timer: NodeJS.Timeout;

  constructor(res: ServerResponse, bytesPerChunk: number, intervalMs: number) {
    this.#res = res;
    this.#bytesPerChunk = bytesPerChunk;
    this.#timer = setInterval(() => this.#pump(), Math.max(1, timerDelay(intervalMs)));
    res.once('close', () => clearInterval(this.#timer));
  }

  write(chunk: string | Buffer): void {
    if (chunk.length > 0) this.#queue.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
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
    const head = this.#queue[0];
    if (head !== undefined) {
      // One piece never spans two queued chunks: simpler, and still at most bytesPerChunk.
      const piece = head.subarray(0, this.#bytesPerChunk);
      if (piece.length === head.length) this.#queue.shift();
      else this.#queue[0] = head.subarray(piece.length);
      this.#res.write(piece);
      return;
    }
    if (this.#after === 'open') return;
    clearInterval(this.#timer);
    if (this.#after === 'end') this.#res.end();
    else resetSocket(this.#res);
  }
}
