import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/testing/index.js';
import { request } from './wire.js';

let server: ApiServer;
beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});

const event = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2025-01-01T00:00:00.000000Z',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-0',
  action: 'Reconcile',
  reason: 'Synced',
  type: 'Normal',
  note: 'all good',
  regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: 'default', uid: 'u-1' },
  ...extra,
});
const url = (ns = 'default'): string => `${server.url}/apis/events.k8s.io/v1/namespaces/${ns}/events`;

describe('events.k8s.io/v1 events', () => {
  it('stores a valid event and lists it by the object it is about', async () => {
    expect((await request(url(), { method: 'POST', body: event('e1') })).status).toBe(201);
    expect((await request(url(), { method: 'POST', body: event('e2', { regarding: { kind: 'ConfigMap', name: 'other', namespace: 'default' } }) })).status).toBe(201);
    const listed = await request(`${url()}?fieldSelector=${encodeURIComponent('regarding.name=cfg,reason=Synced')}`);
    expect(listed.json.items.map((e: any) => e.metadata.name)).toEqual(['e1']);
  });

  it('refuses, in kube-apiserver’s words, events a recorder filled wrongly', async () => {
    const refused = await request(url(), {
      method: 'POST',
      body: event('bad', {
        eventTime: undefined,
        type: 'Info',
        series: { count: 1, lastObservedTime: '2025-01-01T00:00:00.000000Z' },
        regarding: { kind: 'ConfigMap', name: 'c', namespace: 'other' },
      }),
    });
    expect(refused.status).toBe(422);
    expect(refused.json.message).toBe(
      'Event "bad" is invalid: [involvedObject.namespace: Invalid value: "other": does not match event.namespace, series.count: Invalid value: "": should be at least 2, eventTime: Required value, type: Invalid value: "": has invalid value: Info]',
    );
    expect(refused.json.details).toMatchObject({ name: 'bad', kind: 'Event' });
    expect(refused.json.details.causes.map((c: any) => c.field)).toEqual(['involvedObject.namespace', 'series.count', 'eventTime', 'type']);
    // With an eventTime, the recorder's fields are required and bounded too.
    const incomplete = await request(url(), { method: 'POST', body: event('incomplete', { action: '', reportingInstance: 'x'.repeat(129), note: 'x'.repeat(1025) }) });
    expect(incomplete.json.details.causes.map((c: any) => c.field)).toEqual(['reportingInstance', 'action', 'note']);
  });

  it('a series is updated by patch and checked again', async () => {
    await request(url(), { method: 'POST', body: event('s1') });
    const patched = await request(`${url()}/s1`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { series: { count: 2, lastObservedTime: '2025-01-01T00:00:01.000000Z' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.series.count).toBe(2);
    const bad = await request(`${url()}/s1`, { method: 'PATCH', contentType: 'application/merge-patch+json', body: { series: { count: 0 } } });
    expect(bad.status).toBe(422);
  });

  it('core v1 events are served too', async () => {
    const res = await request(`${server.url}/api/v1/namespaces/default/events`, {
      method: 'POST',
      body: { metadata: { name: 'core-1' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'Started', type: 'Normal' },
    });
    expect(res.status).toBe(201);
    expect((await request(`${server.url}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp`)).json.items).toHaveLength(1);
  });
});
