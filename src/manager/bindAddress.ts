import { isIP } from 'node:net';
import { describeValue } from '../options/validate.js';

/** Where a server listens: `host` undefined means every interface. Port 0 asks the system for a free one. */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const FORMAT = 'host:port (":8080", "127.0.0.1:8080", "[::1]:8080"), or "0" to disable';

/**
 * Parses a bind address the way the Go controllers' flags read it: `":8080"` (every interface),
 * `"127.0.0.1:8080"`, `"localhost:8080"`, `"[::1]:8080"`, or `"0"` for no server at all.
 *
 * @returns the address, or undefined for `"0"`.
 * @throws {TypeError} naming `option` and the value when it is anything else.
 */
export function parseBindAddress(option: string, value: unknown): BindAddress | undefined {
  const bad = (why: string): TypeError => new TypeError(`manager: option "${option}" ${why}, got ${describeValue(value)}`);
  if (typeof value !== 'string') throw bad(`must be a string, ${FORMAT}`);
  if (value === '0') return undefined;
  const colon = value.lastIndexOf(':');
  if (colon < 0) throw bad(`must be ${FORMAT}`);
  let host = value.slice(0, colon);
  const portText = value.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) throw bad(`must end in a port number (${FORMAT})`);
  const port = Number(portText);
  if (port > 65535) throw bad(`has port ${port}, outside 0-65535`);
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1);
    if (isIP(host) !== 6) throw bad(`has "[${host}]", which is not an IPv6 address`);
    return { host, port };
  }
  if (host === '') return { host: undefined, port };
  if (isIP(host) === 4) return { host, port };
  if (host.includes(':')) throw bad(`has an IPv6 host without brackets; write "[${host}]:${port}"`);
  if (!HOSTNAME.test(host)) throw bad(`has "${host}", which is neither an IP address nor a host name`);
  return { host, port };
}

/** The address as a URL authority, for messages and links: `127.0.0.1:8081`, `[::1]:8081`, `:8081`. */
export function formatBindAddress(address: BindAddress): string {
  const host = address.host === undefined ? '' : isIP(address.host) === 6 ? `[${address.host}]` : address.host;
  return `${host}:${address.port}`;
}
