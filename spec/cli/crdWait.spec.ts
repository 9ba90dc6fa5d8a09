/**
 * How `crd install` waits for CRDs, against the simulator serving CustomResourceDefinitions as plain objects
 * (no controller sets their conditions), so each condition the wait reads is written by the test. Once the
 * simulator serves CRDs itself (it establishes them), spec/cli/crdInstall.spec.ts covers the command and this
 * file is skipped.
 */
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { objectClient } from '../../src/client/objectClient.js';
import { waitEstablished } from '../../src/cli/crdInstall.js';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { waitFor } from '../helpers/waitFor.js';

const CRDS = 'apiextensions.k8s.io/v1/customresourcedefinitions';

/** True when a POST of a CRD to a fresh simulator is refused (it does not serve them). */
async function simulatorLacksCrds(): Promise<boolean> {
  const server = await startApiServer();
  try {
    const res = await fetch(`${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await res.arrayBuffer();
    return res.status === 404;
  } finally {
    await server.close();
  }
}

const plainObjects = await simulatorLacksCrds();

/** Collected text of a stream. */
function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return { stream, text: () => text };
}

describe.skipIf(!plainObjects)('crd install: waiting for Established', () => {
  let server: ApiServer;
  // Only the fields the wait reads: the simulator keeps them as plain objects.
  const crd = (name: string, conditions?: object[]): never =>
    ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name }, spec: {}, ...(conditions === undefined ? {} : { status: { conditions } }) }) as never;

  beforeEach(async () => {
    server = await startApiServer();
    server.registerResource({ group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false });
  });
  afterEach(async () => {
    await server.close();
  });

  function wait(names: string[], timeoutMs = 60_000) {
    const out = sink();
    const err = sink();
    const done = waitEstablished(server.kubeConfig(), new Set(names), Date.now(), { force: true, timeoutMs, out: out.stream, err: err.stream });
    return { done, out: out.text, err: err.text };
  }

  it('names each CRD as it becomes Established, and ends when all are', async () => {
    const crds = objectClient(server.kubeConfig(), CRDS);
    await crds.create(crd('a.example.com', [{ type: 'Established', status: 'True' }]));
    await crds.create(crd('b.example.com'));
    const w = wait(['a.example.com', 'b.example.com']);
    await waitFor(() => w.out().includes('a.example.com established'), 'a to be named');
    expect(w.out()).not.toContain('b.example.com');
    const b = await crds.get('b.example.com');
    await crds.replace({ ...b, status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }] } } as never);
    expect(await w.done).toBe(0);
    expect(w.out()).toMatch(/^customresourcedefinition a\.example\.com established \(.+\)\ncustomresourcedefinition b\.example\.com established \(.+\)\n$/);
    expect(w.err()).toBe('');
  });

  it('refused names end the wait at once with the condition, its reason and its message, escaped', async () => {
    const crds = objectClient(server.kubeConfig(), CRDS);
    await crds.create(crd('c.example.com', [{ type: 'NamesAccepted', status: 'False', reason: 'PluralConflict', message: '"cs" is already in use\u001b[2J' }, { type: 'Established', status: 'False', reason: 'NotAccepted' }]));
    const w = wait(['c.example.com']);
    expect(await w.done).toBe(1);
    expect(w.err()).toBe('error: c.example.com is not Established: NamesAccepted False (PluralConflict): "\\"cs\\" is already in use\\u001b[2J"\n');
  });

  it('a CRD deleted while waited for ends the wait', async () => {
    const crds = objectClient(server.kubeConfig(), CRDS);
    await crds.create(crd('d.example.com', [{ type: 'Established', status: 'False', reason: 'Installing' }]));
    const w = wait(['d.example.com']);
    // Deleted once the informer has listed it and watches: a delete before the list would never be seen.
    await waitFor(() => server.stats.watchesOpen > 0, 'the watch on CRDs');
    await crds.delete('d.example.com');
    expect(await w.done).toBe(1);
    expect(w.err()).toBe('error: d.example.com was deleted while waiting for it to be Established\n');
  });

  it('when the time is up, each CRD still pending is named with the conditions that stand', async () => {
    const crds = objectClient(server.kubeConfig(), CRDS);
    await crds.create(crd('e.example.com', [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have not been accepted' }]));
    const w = wait(['e.example.com', 'f.example.com'], 1_500);
    expect(await w.done).toBe(1);
    expect(w.err()).toBe(
      'error: not Established within 1.5s: e.example.com: Established False (Installing): "the initial names have not been accepted"; f.example.com: not seen\n',
    );
  });
});
