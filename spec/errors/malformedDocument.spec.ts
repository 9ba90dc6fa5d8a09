import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { MalformedDocumentError } from '../../src/errors/MalformedDocumentError.js';
import { loadKubeConfig } from '../../src/manager/kubeConfig.js';
import { ClusterError } from '../../src/multicluster/ClusterError.js';
import { informer } from '../../src/informer/informer.js';
import { kubeSource } from '../../src/sources/kubeSource.js';
import { DecodeError } from '../../src/errors/api/DecodeError.js';
import { kubeconfigClusters } from '../../src/multicluster/kubeconfigClusters.js';
import { secretClusters } from '../../src/multicluster/secretClusters.js';
import { startApiServer } from '../../src/testing/index.js';
import { leak } from '../helpers/secretFree.js';
import { waitFor } from '../helpers/waitFor.js';

const TOKEN = 'tok-3f9a1c7e5b2d-SECRET';

/**
 * Kubeconfigs holding a token that do not parse, each in a way the YAML
 * parser's error would quote: a snippet of the lines around the fault, or a
 * reason naming what it read (an alias, a tag).
 */
const MALFORMED: Readonly<Record<string, string>> = {
  'bad indentation right after the token': `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${TOKEN}\n   oops: [\n`,
  'an unterminated flow mapping': `users:\n- name: u\n  user: {token: ${TOKEN}\n`,
  'an alias named after the token': `users: *${TOKEN}\n`,
  'a tag holding the token': `users: !<tag:${TOKEN}> x\n`,
  'a tag name with characters a tag cannot hold': `users: !${TOKEN}{ x\n`,
  'an unterminated quoted token': `users:\n- name: u\n  user:\n    token: "${TOKEN}\n`,
};

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rxkube-malformed-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('a malformed credential-bearing document never puts its content in an error', () => {
  it('MalformedDocumentError.from keeps the position and a fixed reason, and drops what quotes the document', () => {
    const fixed = MalformedDocumentError.from(Object.assign(new Error('bad indentation of a mapping entry (6:4)\n\n 5 | token: x'), { reason: 'bad indentation of a mapping entry', mark: { line: 5, column: 3, buffer: `token: ${TOKEN}` } }));
    expect(fixed.message).toBe('bad indentation of a mapping entry at line 6, column 4');
    expect([fixed.line, fixed.column, fixed.cause]).toEqual([6, 4, undefined]);
    const quoting = MalformedDocumentError.from(Object.assign(new Error(`unidentified alias "${TOKEN}" (1:9)`), { name: 'YAMLException', reason: `unidentified alias "${TOKEN}"`, mark: { line: 0, column: 8 } }));
    expect(quoting.message).toBe('a YAMLException that quotes the document, left out at line 1, column 9');
    expect(MalformedDocumentError.from(new Error('users[0].name is missing')).message).toBe('users[0].name is missing');
  });

  it('secretClusters: a Secret whose kubeconfig does not parse is a ClusterError naming the line, with no token in it', async () => {
    const hub = await startApiServer({ port: 0 });
    cleanups.push(() => hub.close());
    const names = Object.keys(MALFORMED);
    for (const [i, doc] of Object.values(MALFORMED).entries()) {
      const secret: V1Secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: `bad-${i}`, namespace: 'fleet' }, data: { kubeconfig: Buffer.from(doc).toString('base64') } };
      await hub.create('v1/secrets', secret);
    }
    const errors: Error[] = [];
    const sub = secretClusters(hub.kubeConfig(), { namespace: 'fleet', onError: (e) => errors.push(e) }).subscribe();
    cleanups.push(() => sub.unsubscribe());
    await waitFor(() => errors.length >= names.length, 'every malformed Secret to be reported');
    for (const [i, name] of names.entries()) {
      const err = errors.find((e) => e instanceof ClusterError && e.cluster === `bad-${i}`);
      expect(err, name).toBeInstanceOf(ClusterError);
      expect(leak(err, TOKEN), name).toBeUndefined();
      expect(err?.cause, name).toBeInstanceOf(MalformedDocumentError);
      expect(err?.message, name).toMatch(/ at line \d+, column \d+; it is left out$/);
    }
  });

  it('kubeconfigClusters: a file that does not parse is reported with its position and no token', () => {
    const dir = tempDir();
    for (const [name, doc] of Object.entries(MALFORMED)) {
      const path = join(dir, 'config');
      writeFileSync(path, doc);
      const errors: Error[] = [];
      const seen: unknown[] = [];
      const sub = kubeconfigClusters({ path, watch: false, onError: (e) => errors.push(e) }).subscribe((s) => seen.push(s));
      sub.unsubscribe();
      expect(seen, name).toEqual([[]]);
      expect(errors, name).toHaveLength(1);
      expect(leak(errors[0], TOKEN), name).toBeUndefined();
      expect(errors[0]?.message, name).toContain(`${path} is not a valid kubeconfig:`);
      expect(errors[0]?.cause, name).toBeInstanceOf(MalformedDocumentError);
    }
  });

  it('loadKubeConfig (the runner and rxkube watch read kubeconfigs through it): the error names the file and line, not the token', () => {
    const dir = tempDir();
    for (const [name, doc] of Object.entries(MALFORMED)) {
      const path = join(dir, 'config');
      writeFileSync(path, doc);
      let thrown: unknown;
      try {
        loadKubeConfig({ kubeconfig: path });
      } catch (err) {
        thrown = err;
      }
      expect(thrown, name).toBeInstanceOf(Error);
      expect(leak(thrown, TOKEN), name).toBeUndefined();
      expect((thrown as Error).message, name).toMatch(new RegExp(`${path} is not a valid kubeconfig: .* at line \\d+, column \\d+$`));
    }
  });

  it('DecodeError.line keeps keys, literals, numbers and names, and nothing else', () => {
    const line = (text: string): string => new DecodeError('x', text, 0).line;
    expect(line('{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"s","labels":{"a":"b"}},"data":{"k":"c2VjcmV0"},"n":12,"t":true}}')).toBe(
      '{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"s","labels":{"a":"…"}},"data":{"k":"…"},"n":12,"t":true}}',
    );
    // A naming key whose value is not a string names nothing; escaped quotes do not end a string; bare words go.
    expect(line('{"name":["sec\\"ret"],"kind":{"x":"y"},"v":unquoted-secret,"e":""}')).toBe('{"name":["…"],"kind":{"x":"…"},"v":…,"e":""}');
    expect(line(`{"data":"${'s'.repeat(400)}"}`)).toBe('{"data":"……');
    expect(line('{"data":"${TOKEN}'.replace('${TOKEN}', TOKEN))).toBe('{"data":"…');
  });

  it("a watch line of Secrets that cannot be decoded or used is a DecodeError holding none of the Secret's data", async () => {
    const s = await startApiServer({ port: 0 });
    cleanups.push(() => s.close());
    const b64 = Buffer.from(TOKEN).toString('base64');
    const errors: Error[] = [];
    const secrets = informer(kubeSource(s.kubeConfig(), 'v1/secrets'), { onError: (e) => errors.push(e) });
    const sub = secrets.subscribe();
    cleanups.push(() => sub.unsubscribe());
    await secrets.whenSynced({ timeout: 10_000 });
    const bad = [
      // Cut short: not JSON; V8's SyntaxError quotes the text.
      `{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"s","namespace":"default"},"data":{"token":"${b64}"},"stringData":{"raw":"${TOKEN}`,
      // Not JSON either, an unquoted value.
      `{"type":"ADDED","object":{"kind":"Secret","stringData":{"raw":${TOKEN}}}}`,
      // JSON, but no name: reported with the event's text.
      `{"type":"ADDED","object":{"kind":"Secret","metadata":{"namespace":"default"},"data":{"token":"${b64}"},"stringData":{"raw":"${TOKEN}"}}}`,
    ];
    for (const [i, line] of bad.entries()) {
      s.faults.inject({ type: 'malformedLine', line }, { verb: 'watch', resource: 'v1/secrets' });
      await s.create('v1/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `after-${i}`, namespace: 'default' } });
      await waitFor(() => secrets.store.getByKey(`default/after-${i}`), 'the Secret after the bad line');
    }
    const decodeErrors = errors.filter((e) => e instanceof DecodeError);
    expect(decodeErrors).toHaveLength(bad.length);
    for (const err of decodeErrors) {
      expect(leak(err, TOKEN)).toBeUndefined();
      expect(leak(err, b64)).toBeUndefined();
      // What the line was is still told: its keys, and the strings that name the object.
      expect((err as DecodeError).line).toMatch(/^\{"type":"ADDED","object":\{"kind":"Secret",/);
    }
  });
});
