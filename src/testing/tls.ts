import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * A CA and the serving certificate it signed for 127.0.0.1 and localhost,
 * PEM-encoded.
 */
export interface ServingCertificate {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

// A minimal DER writer: node can verify certificates but has no API to issue them.

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const bitString = (b: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), b]));
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 + n, content);
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));

function integer(b: Buffer): Buffer {
  // DER integers are signed: a leading 1 bit needs a zero byte in front to stay positive.
  return tlv(0x02, (b[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [40 * (arcs[0] as number) + (arcs[1] as number)];
  for (const arc of arcs.slice(2)) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  // UTCTime until 2049, GeneralizedTime after, as RFC 5280 requires.
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

function name(commonName: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName)))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

function keyId(publicKey: KeyObject): Buffer {
  return createHash('sha1').update(publicKey.export({ type: 'spki', format: 'der' })).digest();
}

interface IssueOptions {
  readonly subject: string;
  readonly issuer: string;
  readonly publicKey: KeyObject;
  readonly signingKey: KeyObject;
  readonly issuerKeyId: Buffer;
  readonly extensions: Buffer[];
}

function issue(o: IssueOptions): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f;
  const now = Date.now();
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(o.issuer),
    seq(time(new Date(now - 60 * 60 * 1000)), time(new Date(now + 365 * 24 * 60 * 60 * 1000))),
    name(o.subject),
    o.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...o.extensions, extension('2.5.29.35', false, seq(tlv(0x80, o.issuerKeyId))))),
  );
  const signature = sign('sha256', tbs, o.signingKey);
  const der = seq(tbs, ECDSA_SHA256, bitString(signature));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

/**
 * Generates a fresh P-256 CA and a serving certificate for `127.0.0.1` and
 * `localhost` signed by it, valid for a year.
 */
export function generateServingCertificate(): ServingCertificate {
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const leaf = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caId = keyId(ca.publicKey);
  const caPem = issue({
    subject: 'rxkube-simulator-ca',
    issuer: 'rxkube-simulator-ca',
    publicKey: ca.publicKey,
    signingKey: ca.privateKey,
    issuerKeyId: caId,
    extensions: [
      extension('2.5.29.19', true, seq(bool(true))),
      // keyCertSign and cRLSign.
      extension('2.5.29.15', true, bitString(Buffer.from([0x06]), 1)),
      extension('2.5.29.14', false, octets(caId)),
    ],
  });
  const certPem = issue({
    subject: 'rxkube-simulator',
    issuer: 'rxkube-simulator-ca',
    publicKey: leaf.publicKey,
    signingKey: ca.privateKey,
    issuerKeyId: caId,
    extensions: [
      extension('2.5.29.19', true, seq()),
      // digitalSignature.
      extension('2.5.29.15', true, bitString(Buffer.from([0x80]), 7)),
      extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))),
      extension('2.5.29.17', false, seq(tlv(0x82, Buffer.from('localhost')), tlv(0x87, Buffer.from([127, 0, 0, 1])))),
      extension('2.5.29.14', false, octets(keyId(leaf.publicKey))),
    ],
  });
  const keyPem = leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { caPem, certPem, keyPem };
}
