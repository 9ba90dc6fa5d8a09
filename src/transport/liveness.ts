import diagnostics from 'node:diagnostics_channel';
import type { ClientHttp2Stream, Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { ConnectionError } from '../errors/api/ConnectionError.js';
import { timerDelay } from '../options/timerDelay.js';

/** Where a connection's check hangs on its socket; readable through `session.socket`, which forwards property reads. */
const CHECK = Symbol('rxkube.liveness');

/** Node publishes every HTTP/2 stream a client opens here (Node 22.17 and later); the stream knows its session. */
const STREAM_CREATED = 'http2.client.stream.created';

/** The checks of open HTTP/2 connections; the channel is subscribed only while there is one. */
const checks = new Set<LivenessCheck>();

function onStreamCreated(message: unknown): void {
  const session = (message as { stream?: ClientHttp2Stream }).stream?.session;
  const check = (session?.socket as { [CHECK]?: LivenessCheck } | undefined)?.[CHECK];
  if (session !== undefined && check !== undefined) check.attach(session);
}

/**
 * client-go's HTTP/2 health check for one connection (internal): once
 * nothing has been read for `readIdleMs`, send a PING; if no answer comes
 * within `pingTimeoutMs`, destroy the socket, so that every request on it
 * fails with a `ConnectionError` of code `PING_TIMEOUT` and is retried by
 * its owner (a watch resumes from its last resourceVersion).
 *
 * undici keeps its HTTP/2 session to itself. The socket is ours (the pool's
 * connector made it), its `bytesRead` counts what the session reads, and the
 * session is learnt from the first stream opened on it, through Node's
 * `http2.client.stream.created` diagnostics channel and the session's
 * socket proxy (which forwards reads of the mark set here). undici's own
 * PING, sent every minute whatever happens and never timed out, is turned
 * off in favour of this one.
 */
class LivenessCheck {
  readonly #socket: Socket;
  readonly #readIdleMs: number;
  readonly #pingTimeoutMs: number;
  /** Samples `bytesRead`; a few per idle period, so a silence is noticed within a quarter of it. */
  readonly #ticker: NodeJS.Timeout;
  /** Set by the first stream; a PING needs it. */
  #session: Http2Session | undefined;
  #lastBytes = 0;
  #lastReadAt = Date.now();
  /** Armed while a PING waits for its answer. */
  #pingTimer: NodeJS.Timeout | undefined;

  constructor(socket: Socket, readIdleMs: number, pingTimeoutMs: number) {
    this.#socket = socket;
    this.#readIdleMs = readIdleMs;
    this.#pingTimeoutMs = pingTimeoutMs;
    this.#ticker = setInterval(() => this.#tick(), timerDelay(Math.max(5, Math.floor(readIdleMs / 4)))).unref();
    socket.once('close', () => this.#stop());
    if (checks.size === 0) diagnostics.subscribe(STREAM_CREATED, onStreamCreated);
    checks.add(this);
  }

  attach(session: Http2Session): void {
    this.#session ??= session;
  }

  #tick(): void {
    const bytes = this.#socket.bytesRead;
    if (bytes !== this.#lastBytes) {
      this.#lastBytes = bytes;
      this.#lastReadAt = Date.now();
      return;
    }
    const session = this.#session;
    if (this.#pingTimer !== undefined || session === undefined || session.destroyed || Date.now() - this.#lastReadAt < this.#readIdleMs) return;
    const silentMs = Date.now() - this.#lastReadAt;
    this.#pingTimer = setTimeout(() => {
      this.#socket.destroy(
        new ConnectionError(`HTTP/2 connection to ${this.#socket.remoteAddress ?? 'the server'}: no answer to a PING within ${this.#pingTimeoutMs} ms, after ${silentMs} ms without data`, { code: 'PING_TIMEOUT' }),
      );
    }, timerDelay(this.#pingTimeoutMs)).unref();
    try {
      session.ping((err) => {
        if (err !== null) return;
        clearTimeout(this.#pingTimer);
        this.#pingTimer = undefined;
        this.#lastReadAt = Date.now();
      });
    } catch {
      // The session is closing on its own; its requests fail without help.
      clearTimeout(this.#pingTimer);
      this.#pingTimer = undefined;
    }
  }

  #stop(): void {
    clearInterval(this.#ticker);
    clearTimeout(this.#pingTimer);
    this.#pingTimer = undefined;
    this.#session = undefined;
    checks.delete(this);
    if (checks.size === 0) diagnostics.unsubscribe(STREAM_CREATED, onStreamCreated);
  }
}

/**
 * Wraps a connector so that every connection on which the server chose
 * HTTP/2 gets a {@link LivenessCheck} (internal).
 *
 * @param connect undici's connector for the pool's TLS material.
 * @param readIdleMs Silence before a PING.
 * @param pingTimeoutMs Time a PING may take.
 */
export function withLivenessCheck(connect: buildConnector.connector, readIdleMs: number, pingTimeoutMs: number): buildConnector.connector {
  return (options, callback) => {
    connect(options, (...args) => {
      // On failure undici calls back with the error alone.
      const socket = args[0] === null ? (args[1] as Socket & { alpnProtocol?: string | false; [CHECK]?: LivenessCheck }) : undefined;
      if (socket !== undefined && socket.alpnProtocol === 'h2') socket[CHECK] = new LivenessCheck(socket, readIdleMs, pingTimeoutMs);
      callback(...args);
    });
  };
}
