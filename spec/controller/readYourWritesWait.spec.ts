import { Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { recordAnswer } from '../../src/client/recordWrite.js';
import { writeLog } from '../../src/client/writeLog.js';
import { ReadYourWrites } from '../../src/controller/readYourWrites.js';
import type { Triggers } from '../../src/controller/triggers.js';
import type { ControllerSource } from '../../src/controller/types.js';
import { resourceKey } from '../../src/sources/identity.js';
import type { SourceIdentity } from '../../src/sources/types.js';
import type { KubeObject } from '../../src/store/types.js';
import { settle, virtualClock } from '../workqueue/virtualTime.js';
import { memorySource, type MemorySource } from './memorySource.js';

const CLUSTER = 'https://10.0.0.1:6443';

/** A memory source that says which resource it mirrors, with or without resourceVersion$. */
function source(plural: string, withChanges: boolean): MemorySource<KubeObject> & { changes: Subject<string> | undefined } {
  const identity: SourceIdentity = { cluster: CLUSTER, group: '', version: 'v1', plural };
  const changes = withChanges ? new Subject<string>() : undefined;
  return Object.assign(memorySource<KubeObject>(plural), { identity, changes, ...(changes !== undefined && { resourceVersion$: changes.asObservable() }) });
}

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'default', resourceVersion: rv, uid: `uid-${name}` } });
const wrote = (plural: string, o: KubeObject): void => recordAnswer(resourceKey({ cluster: CLUSTER, group: '', plural }), 'default', undefined, o);

function gate(primary: ControllerSource<KubeObject>, others: ControllerSource<KubeObject>[] = [], timeoutMs = 1_000) {
  const clock = virtualClock();
  const triggers: Triggers<unknown> = { primary: primary as ControllerSource<unknown>, owns: [], watches: others.map((source) => ({ source: source as ControllerSource<unknown>, map: () => undefined })) };
  return { clock, ryw: new ReadYourWrites(triggers, { timeoutMs }, clock.scheduler, 'test') };
}

afterEach(() => writeLog.reset());

describe('ReadYourWrites.wait', () => {
  it('answers at once, without a promise, when there is nothing to wait for', () => {
    const things = source('things', true);
    const { ryw } = gate(things);
    const signal = new AbortController().signal;
    expect(ryw.wait('default/a', signal, () => {})).toBeUndefined();
    things.upsert(obj('a', '5'));
    wrote('things', obj('a', '5'));
    wrote('things', obj('b', '9'));
    // The primary source waits for the object being reconciled only.
    expect(ryw.wait('default/a', signal, () => {})).toBeUndefined();
    expect(ryw.wait('default/c', signal, () => {})).toBeUndefined();
    expect(ryw.wait('default/b', signal, () => {})).toBeInstanceOf(Promise);
  });

  it('ends when resourceVersion$ says the cache caught up, and looks every 10 ms at a source without it', async () => {
    const things = source('things', true);
    const others = source('others', false);
    const { clock, ryw } = gate(things, [others]);
    things.upsert(obj('a', '1'));
    wrote('things', obj('a', '2'));
    wrote('others', obj('o', '3'));
    let done = false;
    void ryw.wait('default/a', new AbortController().signal, () => {})?.then(() => (done = true));
    things.upsert(obj('a', '2'));
    things.changes?.next('2');
    await settle();
    expect(done).toBe(false);
    others.upsert(obj('p', '3'));
    clock.advance(9);
    await settle();
    expect(done).toBe(false);
    clock.advance(1);
    await settle();
    expect(done).toBe(true);
  });

  it('does not wait for writes made after it began', async () => {
    const things = source('things', true);
    const { ryw } = gate(things, [things]);
    wrote('things', obj('a', '2'));
    let done = false;
    void ryw.wait('default/a', new AbortController().signal, () => {})?.then(() => (done = true));
    wrote('things', obj('b', '3'));
    things.upsert(obj('a', '2'));
    things.changes?.next('2');
    await settle();
    expect(done).toBe(true);
  });

  it('ends on abort and on timeout, and reports timeouts at most every 30 s with the count left out', async () => {
    const things = source('things', true);
    const { clock, ryw } = gate(things, [], 100);
    wrote('things', obj('a', '2'));
    const reports: Error[] = [];
    const ac = new AbortController();
    let aborted = false;
    void ryw.wait('default/a', ac.signal, (e) => reports.push(e))?.then(() => (aborted = true));
    ac.abort();
    await settle();
    expect(aborted).toBe(true);
    expect(reports).toEqual([]);
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) {
      const waited = ryw.wait('default/a', signal, (e) => reports.push(e));
      clock.advance(100);
      await waited;
    }
    expect(reports).toHaveLength(1);
    clock.advance(30_000);
    const waited = ryw.wait('default/a', signal, (e) => reports.push(e));
    clock.advance(100);
    await waited;
    expect(reports.map((e) => e.message)).toEqual([
      expect.stringMatching(/^test: the cache of things \(at resourceVersion ""\) still did not show this process's write of default\/a at resourceVersion 2 after 100 ms/),
      expect.stringMatching(/\(2 earlier wait\(s\) timed out since the last report\)$/),
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('lets the log forget writes its caches saw once their run registered, and lets go of them when the run ends', () => {
    const things = source('things', true);
    const { ryw } = gate(things);
    const run = new AbortController();
    expect(ryw.wait('default/x', run.signal, () => {})).toBeUndefined();
    wrote('things', obj('a', '2'));
    things.upsert(obj('a', '2'));
    expect(ryw.wait('default/x', run.signal, () => {})).toBeUndefined();
    expect(writeLog.size).toBe(0);
    run.abort();
    wrote('things', obj('b', '3'));
    things.upsert(obj('b', '3'));
    expect(ryw.wait('default/x', new AbortController().signal, () => {})).toBeUndefined();
    expect(writeLog.size).toBe(0);
  });
});
