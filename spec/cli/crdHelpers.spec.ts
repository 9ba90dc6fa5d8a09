import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { statusOf } from '../../src/cli/columns.js';
import { crdState } from '../../src/cli/crdInstall.js';
import { orderCrd, readCrdFile } from '../../src/cli/crdManifest.js';
import { closeNames, matchResource, type ServedResource } from '../../src/cli/discovery.js';
import { defaultColumns, parseJsonPath, printerCell } from '../../src/cli/printerColumns.js';

const served = (group: string, plural: string, kind: string, shortNames: string[] = []): ServedResource => ({
  group,
  version: 'v1',
  plural,
  singular: kind.toLowerCase(),
  kind,
  namespaced: true,
  shortNames,
});
const SERVED = [served('', 'pods', 'Pod', ['po']), served('example.com', 'websites', 'Website', ['ws']), served('other.io', 'websites', 'Website'), served('example.com', 'widgets', 'Widget')];

describe('names through discovery', () => {
  it.each([
    ['websites', 'example.com'],
    ['website', 'example.com'],
    ['ws', 'example.com'],
    ['WEBSITE', 'example.com'],
    ['websites.example.com', 'example.com'],
    ['websites.other.io', 'other.io'],
    ['website.other.io', 'other.io'],
  ])('%s is websites of %s', (name, group) => {
    expect(matchResource(name, SERVED)).toMatchObject({ plural: 'websites', group });
  });

  it('a name of no served resource matches nothing, and the close names are suggested, closest first', () => {
    expect(matchResource('websites.nowhere.io', SERVED)).toBeUndefined();
    expect(matchResource('webstes', SERVED)).toBeUndefined();
    expect(closeNames('webstes', SERVED)).toEqual(['websites.example.com', 'websites.other.io']);
    expect(closeNames('widget.example.org', SERVED)).toEqual(['widgets.example.com']);
    expect(closeNames('pod', SERVED)).toEqual(['pods']);
    expect(closeNames('zzzz', SERVED)).toEqual([]);
  });
});

describe('printer columns', () => {
  const obj = {
    metadata: { creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { image: 'nginx', ports: [{ port: 80 }, { port: 443 }], labels: { 'a.b/c': 'd' } },
    status: { replicas: 0, conditions: [{ type: 'Synced', status: 'True' }, { type: 'Ready', status: 'False', message: 'pulling' }] },
  };

  it('evaluates the JSONPath subset CRDs use', () => {
    const at = (path: string): string => printerCell({ name: 'X', type: 'string', jsonPath: path }, obj, 0);
    expect(at('.spec.image')).toBe('nginx');
    expect(at('{.spec.image}')).toBe('nginx');
    expect(at('.spec.ports[*].port')).toBe('80,443');
    expect(at('.spec.ports[-1].port')).toBe('443');
    expect(at(".spec.labels['a.b/c']")).toBe('d');
    expect(at('.status.conditions[?(@.type=="Ready")].message')).toBe('pulling');
    expect(at(".status.conditions[?(@.type!='Ready')].type")).toBe('Synced');
    expect(at('.status.missing')).toBe('<none>');
    expect(at('.status..replicas')).toBe('<unsupported path>');
    expect(parseJsonPath('.status..replicas')).toBeUndefined();
  });

  it('cells read like kubectl: <none>, dates as ages, several values joined, zero kept', () => {
    const now = Date.parse('2026-01-01T00:05:00Z');
    expect(printerCell({ name: 'Replicas', type: 'integer', jsonPath: '.status.replicas' }, obj, now)).toBe('0');
    expect(printerCell({ name: 'Ports', type: 'string', jsonPath: '.spec.ports[*].port' }, obj, now)).toBe('80,443');
    expect(printerCell({ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }, obj, now)).toBe('5m');
    expect(printerCell({ name: 'X', type: 'string', jsonPath: '.spec.nothing' }, obj, now)).toBe('<none>');
    expect(printerCell({ name: 'X', type: 'string', jsonPath: '.spec' }, { spec: 'x'.repeat(100) }, now)).toHaveLength(64);
  });

  it('a watch shows the priority-0 columns of the version watched, leaving out the creation timestamp', () => {
    const crd = {
      spec: {
        versions: [
          { name: 'v1', additionalPrinterColumns: [{ name: 'Image', type: 'string', jsonPath: '.spec.image' }, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }, { name: 'Wide', type: 'string', jsonPath: '.x', priority: 1 }] },
          { name: 'v2', additionalPrinterColumns: [{ name: 'Other', type: 'string', jsonPath: '.y' }] },
        ],
      },
    };
    expect(defaultColumns(crd, 'v1').map((c) => c.name)).toEqual(['Image']);
    expect(defaultColumns(crd, 'v3')).toEqual([]);
    expect(defaultColumns(null, 'v1')).toEqual([]);
  });
});

describe('the Ready condition in the status column', () => {
  it('shows Ready, NotReady or Unknown with the reason; a kind with its own column keeps it', () => {
    const withReady = (status: string, reason?: string) => ({ metadata: { generation: 2 }, status: { conditions: [{ type: 'Ready', status, ...(reason === undefined ? {} : { reason }) }] } });
    expect(statusOf('Website', withReady('True', 'Serving'))).toBe('Ready (Serving)');
    expect(statusOf('Website', withReady('False', 'Failed'))).toBe('NotReady (Failed)');
    expect(statusOf('Website', withReady('Unknown'))).toBe('Unknown');
    expect(statusOf('Website', { metadata: { generation: 2 }, status: { conditions: [{ type: 'Synced', status: 'True' }] } } as never)).toBe('generation 2');
    expect(statusOf('Node', withReady('True', 'KubeletReady'))).toBe('Ready');
  });
});

describe('where a CRD stands', () => {
  it('Established, refused names (failed at once), being deleted, or pending with the conditions that say why', () => {
    const crd = (conditions: object[], deleting = false) => ({ metadata: { name: 'x', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, status: { conditions } });
    expect(crdState(crd([{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }])).state).toBe('established');
    expect(crdState(crd([{ type: 'NamesAccepted', status: 'False', reason: 'PluralConflict', message: '"x" is already in use' }, { type: 'Established', status: 'False', reason: 'NotAccepted' }]))).toEqual({
      state: 'failed',
      why: 'NamesAccepted False (PluralConflict): "\\"x\\" is already in use"',
    });
    expect(crdState(crd([], true))).toEqual({ state: 'failed', why: 'it is being deleted' });
    expect(crdState(crd([]))).toEqual({ state: 'pending', why: 'no conditions yet' });
    expect(crdState(crd([{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have not been accepted\u001b[2J' }]))).toEqual({
      state: 'pending',
      why: 'Established False (Installing): "the initial names have not been accepted\\u001b[2J"',
    });
  });
});

describe('CRD files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rxkube-crd-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const crd = (name: string) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });

  it('reads YAML documents (skipping empty ones), a JSON object, or a List of them', () => {
    expect(readCrdFile(file('a.yaml', `---\n${JSON.stringify(crd('a.x.io'))}\n---\n---\n${JSON.stringify(crd('b.x.io'))}\n`)).map((c) => c['metadata'])).toEqual([{ name: 'a.x.io' }, { name: 'b.x.io' }]);
    expect(readCrdFile(file('b.json', JSON.stringify(crd('c.x.io'))))).toHaveLength(1);
    expect(readCrdFile(file('c.json', JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [crd('d.x.io'), crd('e.x.io')] })))).toHaveLength(2);
  });

  it('refuses a file holding anything else, or nothing, naming the document', () => {
    expect(() => readCrdFile(file('d.yaml', `${JSON.stringify(crd('a.x.io'))}\n---\napiVersion: v1\nkind: Namespace\n`))).toThrow(/d\.yaml: document 2 is v1 Namespace, not an apiextensions\.k8s\.io\/v1 CustomResourceDefinition/);
    expect(() => readCrdFile(file('e.yaml', '# nothing\n'))).toThrow(/e\.yaml: holds no CustomResourceDefinition/);
    expect(() => readCrdFile(file('f.yaml', 'a: [\n'))).toThrow(/f\.yaml: not YAML or JSON/);
    expect(() => readCrdFile(join(dir, 'missing.yaml'))).toThrow(/missing\.yaml: cannot read it \(ENOENT\)/);
  });

  it('orders a CRD the way manifests are read, leaving unknown keys after the known ones and schemas alone', () => {
    const ordered = orderCrd({ spec: { versions: [{ schema: { z: 1, a: 2 }, name: 'v1', extra: true }], names: { plural: 'xs', kind: 'X' }, group: 'x.io' }, metadata: { name: 'xs.x.io' }, kind: 'CustomResourceDefinition', apiVersion: 'apiextensions.k8s.io/v1' });
    expect(JSON.stringify(ordered)).toBe(
      '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"xs.x.io"},"spec":{"group":"x.io","names":{"kind":"X","plural":"xs"},"versions":[{"name":"v1","schema":{"z":1,"a":2},"extra":true}]}}',
    );
  });
});
