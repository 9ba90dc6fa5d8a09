import { connect, createSecureContext, createServer, type Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CertificateError } from '../../../src/manager/certificates/CertificateError.js';
import { describePair } from '../../../src/manager/certificates/describe.js';
import { generateCa, issueServing, selfSigned } from '../../../src/manager/certificates/generate.js';
import type { TlsPair } from '../../../src/manager/certificates/tlsPair.js';

const DAY = 86_400_000;
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(pair: TlsPair): Promise<number> {
  const server = createServer({ cert: pair.cert, key: pair.key }, (socket) => socket.end('hello'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** One real handshake: what the client read, or the code of the error it failed with. */
function handshake(port: number, ca: string, servername: string | undefined): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca: [ca], ...(servername !== undefined && { servername }) });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(err.code ?? err.message);
    });
  });
}

describe('generateCa, issueServing', () => {
  it('issues a pair that a TLS server serves and a client trusting the CA verifies, for every DNS name and IP address', async () => {
    const ca = await generateCa({ commonName: 'web-webhook-ca', validityMs: 30 * DAY });
    const pair = await issueServing(ca, { dnsNames: ['web', 'web.ops.svc'], ipAddresses: ['127.0.0.1'], validityMs: 10 * DAY });
    expect(() => createSecureContext({ cert: pair.cert, key: pair.key })).not.toThrow();
    const port = await serve(pair);
    expect(await handshake(port, ca.cert, 'web')).toBe('hello');
    expect(await handshake(port, ca.cert, 'web.ops.svc')).toBe('hello');
    expect(await handshake(port, ca.cert, undefined)).toBe('hello');
    expect(await handshake(port, ca.cert, 'other.ops.svc')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    const stranger = await generateCa({ commonName: 'another-ca', validityMs: DAY });
    expect(await handshake(port, stranger.cert, 'web')).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED/);
  });

  it('describes the pair: names, validity from an hour before now, and the CA of a bundle that signed it', async () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const ca = await generateCa({ commonName: 'ca', validityMs: 30 * DAY, now });
    const other = await generateCa({ commonName: 'ca', validityMs: 30 * DAY, now });
    const pair = await issueServing(ca, { dnsNames: ['web.ops.svc'], ipAddresses: ['::1'], validityMs: 10 * DAY, now });
    const d = await describePair({ ...pair, ca: other.cert + ca.cert });
    expect(d.dnsNames).toEqual(['web.ops.svc']);
    expect(d.ipAddresses).toEqual(['::1']);
    expect(d.notBefore.toISOString()).toBe('2029-12-31T23:00:00.000Z');
    expect(d.notAfter.getTime()).toBe(now + 10 * DAY);
    expect(pair.notAfter.getTime()).toBe(now + 10 * DAY);
    // Same subject, other key: only the signature tells them apart.
    expect(d.issuerCa).toBe(ca.cert);
    expect((await describePair({ ...pair, ca: other.cert })).issuerCa).toBeUndefined();
  });

  it('never issues past the CA end', async () => {
    const now = Date.now() + 123; // not a whole second: certificates hold seconds
    const ca = await generateCa({ commonName: 'ca', validityMs: DAY, now });
    const pair = await issueServing(ca, { dnsNames: ['web'], validityMs: 30 * DAY, now });
    expect(pair.notAfter).toEqual(ca.notAfter);
    expect(pair.notAfter.getTime()).toBe(Math.floor((now + DAY) / 1000) * 1000);
    expect((await describePair(pair)).notAfter).toEqual(pair.notAfter);
  });

  it('makes a self-signed pair that verifies against itself', async () => {
    const pair = await selfSigned({ dnsNames: ['localhost'], validityMs: DAY });
    const port = await serve(pair);
    expect(await handshake(port, pair.cert, 'localhost')).toBe('hello');
    expect((await describePair({ ...pair, ca: pair.cert })).issuerCa).toBeUndefined(); // no CA: basicConstraints CA:FALSE
  });

  it('refuses what it cannot sign with, with typed errors that quote no key', async () => {
    const ca = await generateCa({ commonName: 'ca', validityMs: DAY });
    const leaf = await issueServing(ca, { dnsNames: ['web'], validityMs: DAY });
    const code = async (p: Promise<unknown>): Promise<string> => p.then(() => 'resolved', (err: unknown) => (err instanceof CertificateError ? err.code : String(err)));
    expect(await code(issueServing(leaf, { dnsNames: ['web'], validityMs: DAY }))).toBe('not-a-ca');
    expect(await code(issueServing({ cert: ca.cert, key: leaf.key }, { dnsNames: ['web'], validityMs: DAY }))).toBe('key-mismatch');
    expect(await code(issueServing({ cert: 'garbage', key: ca.key }, { dnsNames: ['web'], validityMs: DAY }))).toBe('malformed-certificate');
    const badKey = ca.key.replace(/[A-Za-z]{8}/, 'AAAAAAAA');
    const err = await issueServing({ cert: ca.cert, key: badKey }, { dnsNames: ['web'], validityMs: DAY }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(CertificateError);
    const body = ca.key.split('\n')[1] ?? '';
    expect((err as Error).message).not.toContain(body.slice(0, 16));
    expect(await code(describePair({ cert: leaf.cert, key: ca.key }))).toBe('key-mismatch');
    expect(await code(describePair({ cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', key: leaf.key }))).toBe('malformed-certificate');
  });

  it('checks options up front, naming the option and value', async () => {
    await expect(generateCa({ commonName: '', validityMs: DAY })).rejects.toThrow(/option "commonName"/);
    await expect(generateCa({ commonName: 'x', validityMs: -1 })).rejects.toThrow(/option "validityMs" .* got -1/);
    await expect(selfSigned({ dnsNames: [], validityMs: DAY })).rejects.toThrow(/option "dnsNames"/);
    await expect(selfSigned({ dnsNames: ['Web_1'], validityMs: DAY })).rejects.toThrow(/"dnsNames\[0\]" .* "Web_1"/);
    await expect(selfSigned({ dnsNames: ['web'], ipAddresses: ['1.2.3'], validityMs: DAY })).rejects.toThrow(/"ipAddresses\[0\]"/);
    // @ts-expect-error: a misspelt option
    await expect(selfSigned({ dnsNames: ['web'], validityMS: DAY })).rejects.toThrow(/unknown option "validityMS"/);
  });
});
