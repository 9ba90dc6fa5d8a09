import { afterEach, describe, expect, it } from 'vitest';
import { ErrorChannel } from '../../src/errors/ErrorChannel.js';
import { setErrorReporter } from '../../src/errors/reportError.js';
import { reportTo } from '../../src/errors/reportTo.js';

afterEach(() => setErrorReporter(undefined));

/** Captures what reaches the process-wide reporter. */
function captureReporter(): Error[] {
  const reported: Error[] = [];
  setErrorReporter((err) => reported.push(err));
  return reported;
}

describe('reportTo: the callback, else the process-wide reporter', () => {
  it('without a callback, the process-wide reporter gets the error', () => {
    const reported = captureReporter();
    const err = new Error('boom');
    reportTo(undefined, err);
    expect(reported).toEqual([err]);
  });

  it('with a callback, only the callback gets it', () => {
    const reported = captureReporter();
    const heard: Error[] = [];
    const err = new Error('boom');
    reportTo((e) => heard.push(e), err);
    expect(heard).toEqual([err]);
    expect(reported).toEqual([]);
  });

  it('a throwing callback: what it threw is reported, then the error it could not take', () => {
    const reported = captureReporter();
    const err = new Error('boom');
    const thrown = new Error('callback broke');
    expect(() =>
      reportTo(() => {
        throw thrown;
      }, err),
    ).not.toThrow();
    expect(reported).toEqual([thrown, err]);
  });

  it('turns anything thrown into an Error', () => {
    const heard: Error[] = [];
    reportTo((e) => heard.push(e), 'a string');
    expect(heard[0]).toBeInstanceOf(Error);
    expect(heard[0]?.message).toBe('a string');
  });

  it("is what an informer's or controller's error channel uses: a throwing onError loses neither error, and errors$ still hears it", () => {
    const reported = captureReporter();
    const thrown = new Error('onError broke');
    const channel = new ErrorChannel(() => {
      throw thrown;
    });
    const err = new Error('informer failed');
    const onStream: Error[] = [];
    channel.errors$.subscribe((e) => onStream.push(e));
    channel.report(err);
    expect(reported).toEqual([thrown, err]);
    expect(onStream).toEqual([err]);

  });
});
