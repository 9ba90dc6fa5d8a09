import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { bodyChunks } from '../../src/transport/bodyChunks.js';

// A watch body is read one socket chunk at a time (PF-48): no chunk is copied, the stream still stops asking for
// bytes once a bounded amount waits for its reader, and it ends, fails and is let go on the same paths as a `for await` over it.

/** Turns of the event loop: a stream that reads on every turn has read this many times without backpressure. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A stream that makes a 100-byte chunk each time it is asked, one turn later, and counts the asks. */
function endless(highWaterMark: number): { readonly stream: Readable; reads(): number } {
  let reads = 0;
  const stream = new Readable({
    highWaterMark,
    read() {
      reads++;
      setImmediate(() => this.push(Buffer.alloc(100, 0x61)));
    },
  });
  return { stream, reads: () => reads };
}

describe('bodyChunks', () => {
  it('hands over each chunk as the stream received it, the same buffer, never several joined into a copy', async () => {
    const stream = new Readable({ read() {} });
    const sent = [Buffer.from('{"a":1}\n'), Buffer.from('{"b":2}\n'), Buffer.from('{"c":3}\n')];
    for (const chunk of sent) stream.push(chunk);
    stream.push(null);
    const got: Buffer[] = [];
    for await (const chunk of bodyChunks(stream)) got.push(chunk);
    expect(got).toHaveLength(3);
    got.forEach((chunk, i) => expect(chunk).toBe(sent[i]));
  });

  it('stops asking the stream for bytes once its buffer is full while the reader holds a chunk', async () => {
    const { stream, reads } = endless(1000);
    const it = bodyChunks(stream)[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    // A stream left flowing would be asked on each of these turns. Here the chunks the reader has not taken fill
    // 1000 bytes, the stream pauses, fills its own 1000 bytes and stops: what `for await` would hold, a joined
    // copy of up to 1000 bytes in the reader's hands and a full buffer behind it.
    await turns(200);
    expect(reads()).toBeLessThanOrEqual(24);
    expect(stream.readableLength).toBeLessThanOrEqual(1100);
    const before = reads();
    expect((await it.next()).done).toBe(false);
    await it.return?.();
    expect(stream.destroyed).toBe(true);
    expect(before).toBeGreaterThan(1);
  });

  it('destroys the stream when the reader stops early, as a for await loop that breaks does', async () => {
    const { stream } = endless(1000);
    for await (const chunk of bodyChunks(stream)) {
      expect(chunk).toHaveLength(100);
      break;
    }
    expect(stream.destroyed).toBe(true);
  });

  it("throws the stream's error after the chunks before it", async () => {
    const stream = new Readable({ read() {} });
    stream.push(Buffer.from('x'));
    const it = bodyChunks(stream)[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual(Buffer.from('x'));
    const failure = new Error('socket reset');
    const next = it.next();
    stream.destroy(failure);
    await expect(next).rejects.toBe(failure);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('drops the chunks still waiting for the reader when the stream fails, as a for await over it drops what it buffered', async () => {
    for (const read of [(stream: Readable) => stream as AsyncIterable<Buffer>, bodyChunks]) {
      const stream = new Readable({ read() {} });
      stream.push(Buffer.from('x'));
      const it = read(stream)[Symbol.asyncIterator]();
      expect((await it.next()).value).toEqual(Buffer.from('x'));
      stream.push(Buffer.from('y'));
      await new Promise<void>((resolve) => setImmediate(resolve));
      const failure = new Error('socket reset');
      stream.destroy(failure);
      await expect(it.next()).rejects.toBe(failure);
    }
  });

  it('fails with a premature close when the stream is destroyed without an error before its end', async () => {
    const stream = new Readable({ read() {} });
    const it = bodyChunks(stream)[Symbol.asyncIterator]();
    const next = it.next();
    stream.destroy();
    await expect(next).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('ends after the last chunk, whether the end came before the reader asked or while it waited', async () => {
    const early = new Readable({ read() {} });
    early.push(Buffer.from('a'));
    early.push(null);
    const got: string[] = [];
    for await (const chunk of bodyChunks(early)) got.push(chunk.toString());
    expect(got).toEqual(['a']);

    // Chunks still waiting when the stream ended and destroyed itself are the reader's all the same.
    const ended = new Readable({ read() {} });
    ended.push(Buffer.from('a'));
    const chunks = bodyChunks(ended)[Symbol.asyncIterator]();
    expect((await chunks.next()).value).toEqual(Buffer.from('a'));
    ended.push(Buffer.from('b'));
    ended.push(null);
    while (!ended.destroyed) await new Promise<void>((resolve) => setImmediate(resolve));
    expect((await chunks.next()).value).toEqual(Buffer.from('b'));
    expect(await chunks.next()).toEqual({ done: true, value: undefined });

    const late = new Readable({ read() {} });
    const it = bodyChunks(late)[Symbol.asyncIterator]();
    const next = it.next();
    late.push(null);
    expect(await next).toEqual({ done: true, value: undefined });
    expect(late.destroyed).toBe(true);
  });
});
