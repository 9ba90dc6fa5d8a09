import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { generateServingCertificate, type ServingCertificate } from '../../src/testing/tls/tls.js';

/** Serves one TLS handshake with `cert` and reports whether a client trusting only `ca` accepted it. */
async function handshake(cert: ServingCertificate, ca: string): Promise<{ ok: true } | { ok: false; code: string }> {
  const server = tls.createServer({ key: cert.keyPem, cert: cert.certPem }, (socket) => socket.end('hello'));
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
        socket.destroy();
        resolve({ ok: true });
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: String(err.code) }));
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('serving certificates', () => {
  it('are valid DER every time: each parses, is issued by its CA and names 127.0.0.1 and localhost', async () => {
    // A non-minimal serial number broke about one start in 150; 300 pairs would have hit it with near certainty.
    const certs = await Promise.all(Array.from({ length: 300 }, () => generateServingCertificate()));
    const serials = new Set<string>();
    for (const c of certs) {
      const ca = new X509Certificate(c.caPem);
      const leaf = new X509Certificate(c.certPem);
      expect(ca.ca).toBe(true);
      expect(ca.verify(ca.publicKey)).toBe(true);
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
      expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(leaf.checkHost('localhost')).toBe('localhost');
      expect(leaf.checkPrivateKey(createPrivateKey(c.keyPem))).toBe(true);
      expect(new Date(leaf.validTo).getTime()).toBeGreaterThan(Date.now());
      expect(new Date(leaf.validFrom).getTime()).toBeLessThan(Date.now());
      serials.add(leaf.serialNumber);
    }
    expect(serials.size).toBe(certs.length);
  });

  it('serve TLS that a client trusting only their CA accepts and a client trusting another CA refuses', async () => {
    const certs = await Promise.all(Array.from({ length: 4 }, () => generateServingCertificate()));
    for (let i = 0; i < certs.length; i++) {
      const own = certs[i] as ServingCertificate;
      const other = certs[(i + 1) % certs.length] as ServingCertificate;
      expect(await handshake(own, own.caPem)).toEqual({ ok: true });
      const refused = await handshake(own, other.caPem);
      expect(refused.ok).toBe(false);
      expect(refused).toMatchObject({ code: expect.stringMatching(/UNABLE_TO_VERIFY|SELF_SIGNED|CERT_SIGNATURE/) });
    }
  });

  it('leave no Reflect metadata readers behind when no polyfill was installed', async () => {
    await generateServingCertificate();
    expect('getMetadata' in Reflect).toBe(false);
    expect('getOwnMetadata' in Reflect).toBe(false);
  });
});
