import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { followSignals } from '../../src/options/followSignals.js';

const listeners = (s: AbortSignal): number => getEventListeners(s, 'abort').length;

describe('followSignals', () => {
  it('is aborted at once, with its reason, when a followed signal already is, and listens to none', () => {
    const live = new AbortController();
    const why = new Error('gone before');
    const f = followSignals(live.signal, AbortSignal.abort(why));
    expect(f.signal.aborted).toBe(true);
    expect(f.signal.reason).toBe(why);
    expect(listeners(live.signal)).toBe(0);
  });

  it('takes the first already-aborted signal in argument order', () => {
    const first = new Error('first');
    const f = followSignals(undefined, AbortSignal.abort(first), AbortSignal.abort(new Error('second')));
    expect(f.signal.reason).toBe(first);
  });

  it('aborts with the reason of whichever followed signal aborts first, and keeps it', () => {
    const a = new AbortController();
    const b = new AbortController();
    const f = followSignals(a.signal, b.signal);
    expect(f.signal.aborted).toBe(false);
    const why = new Error('b went first');
    b.abort(why);
    expect(f.signal.reason).toBe(why);
    a.abort(new Error('a, too late'));
    expect(f.signal.reason).toBe(why);
    f.release();
  });

  it('aborts with its own reason, or an AbortError when given none, and the followed signals are untouched', () => {
    const a = new AbortController();
    const own = new Error('timed out');
    const f = followSignals(a.signal);
    f.abort(own);
    expect(f.signal.reason).toBe(own);
    expect(a.signal.aborted).toBe(false);
    const g = followSignals(a.signal);
    g.abort();
    expect(g.signal.reason).toBeInstanceOf(DOMException);
    expect((g.signal.reason as DOMException).name).toBe('AbortError');
    f.release();
    g.release();
  });

  it('release() removes every listener, once or twice, and the signal no longer follows', () => {
    const a = new AbortController();
    const b = new AbortController();
    const f = followSignals(a.signal, undefined, b.signal, a.signal);
    // A signal given twice holds one listener.
    expect(listeners(a.signal)).toBe(1);
    expect(listeners(b.signal)).toBe(1);
    f.release();
    f.release();
    expect(listeners(a.signal)).toBe(0);
    expect(listeners(b.signal)).toBe(0);
    a.abort(new Error('after the end'));
    expect(f.signal.aborted).toBe(false);
  });

  it('leaves nothing on a long-lived signal followed by many short ones', () => {
    const life = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const f = followSignals(life.signal);
      if (i % 2 === 0) f.abort(new Error('ended early'));
      f.release();
    }
    expect(listeners(life.signal)).toBe(0);
  });
});
