// The list and watch responses of kubeSource as ix async iterables: each
// iteration makes its own request and decodes its body as it arrives.

import { AsyncIterableX } from 'ix/asynciterable';
import type { CachedLookup } from './cachedParts.js';
import type { Progress } from './http.js';
import { ListDecoder, type ListEnvelope } from './listDecoder.js';
import type { WatchBatch, WatchEvent } from './types.js';
import { WatchDecoder } from './watchDecoder.js';

/** How a list's decoder is made: managedFields left out or not, and its bound on one item. */
export interface DecoderOptions {
  readonly stripManagedFields: boolean;
  readonly maxObjectBytes: number;
}

/** One watch request's body, the progress its decoder reports to the idle timer, and the bound on one line. */
export interface WatchBody {
  readonly chunks: AsyncGenerator<Buffer, void, undefined>;
  readonly progress: Progress;
  readonly maxObjectBytes: number;
  /** The cache's objects, whose unchanged parts a MODIFIED event takes instead of parsing them (PF-50). */
  readonly cached?: CachedLookup;
}

/**
 * The items of one LIST response as a pull-based ix async iterable; the
 * envelope (resourceVersion, continue token) is available once iteration
 * has finished. Each iteration performs its own request.
 */
export class HttpListItemStream<T> extends AsyncIterableX<T> {
  /** Each iteration is a new request; the factory keeps it lazy. */
  readonly #open: () => AsyncGenerator<Buffer, void, undefined>;
  /** Set when an iteration read the whole body; what `list` returns around the items. */
  #envelope: ListEnvelope | undefined;

  /** managedFields left out or not, and the bound on one item. */
  readonly #decoder: DecoderOptions;

  constructor(open: () => AsyncGenerator<Buffer, void, undefined>, decoder: DecoderOptions) {
    super();
    this.#open = open;
    this.#decoder = decoder;
  }

  get envelope(): ListEnvelope | undefined {
    return this.#envelope;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const decoder = new ListDecoder<T>(this.#decoder);
    const out: T[] = [];
    for await (const chunk of this.#open()) {
      let failure: unknown;
      try {
        decoder.push(chunk, out);
      } catch (err) {
        failure = err;
      }
      for (let i = 0; i < out.length; i++) yield out[i] as T;
      out.length = 0;
      if (failure !== undefined) throw failure;
    }
    this.#envelope = decoder.end();
  }
}

/**
 * The events of one watch response as an ix async iterable (`watchBatches`
 * gives the same a chunk at a time). Each iteration performs its own request.
 */
export class HttpWatchStream<T> extends AsyncIterableX<WatchEvent<T>> {
  /** The same response a chunk at a time; each iteration is a new request. */
  readonly #batches: HttpWatchBatches<T>;

  constructor(open: () => WatchBody, stripManagedFields: boolean) {
    super();
    this.#batches = new HttpWatchBatches<T>(open, stripManagedFields);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    for await (const batch of this.#batches) {
      for (let i = 0; i < batch.length; i++) yield batch.at(i) as WatchEvent<T>;
    }
  }
}

/**
 * The events of each chunk of a watch body, as one batch per chunk that
 * completed any, each event parsed when the batch is read that far; a bad
 * line ends it after the events before it.
 */
export async function* watchEvents<T>(body: WatchBody, stripManagedFields: boolean): AsyncGenerator<WatchBatch<T>, void, undefined> {
  // The body learns the credential's redaction once answered, after the decoder exists.
  const decoder = new WatchDecoder<T>({ stripManagedFields, maxObjectBytes: body.maxObjectBytes, redact: (text) => body.progress.redact?.(text) ?? text, cached: body.cached });
  for await (const chunk of body.chunks) {
    let lines: ReturnType<WatchDecoder<T>['lines']>;
    try {
      lines = decoder.lines(chunk);
    } catch (err) {
      // A line begun in earlier chunks that did not decode: nothing of this chunk comes before it.
      lines = { batch: undefined, failure: err };
    }
    if (lines.batch !== undefined) {
      body.progress.made = true;
      yield lines.batch;
    }
    if (lines.failure !== undefined) throw lines.failure;
  }
  const out: WatchEvent<T>[] = [];
  decoder.end(out);
  if (out.length > 0) yield out;
}

/** The HTTP source's batches: the decoding generator itself, with no wrapper between it and the reflector. */
export class HttpWatchBatches<T> extends AsyncIterableX<WatchBatch<T>> {
  /** Each iteration is a new request; the factory keeps it lazy. */
  readonly #open: () => WatchBody;
  /** Leave `metadata.managedFields` out of each event, unparsed. */
  readonly #strip: boolean;

  constructor(open: () => WatchBody, stripManagedFields: boolean) {
    super();
    this.#open = open;
    this.#strip = stripManagedFields;
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchBatch<T>> {
    return watchEvents<T>(this.#open(), this.#strip);
  }
}
