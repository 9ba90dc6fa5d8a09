import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';

/**
 * Every text a user could see from `value`: for an error its name, message,
 * stack, `String()`, `JSON.stringify`, `util.inspect` with hidden fields,
 * and, recursively, every own property (enumerable or not) — so `cause`
 * chains, `AggregateError.errors`, `details` and anything else hung on an
 * error are searched too. Objects and arrays are walked the same way.
 */
export function visibleTexts(value: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      out.push(v);
      return;
    }
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') {
      out.push(String(v));
      return;
    }
    if (v === null || (typeof v !== 'object' && typeof v !== 'function') || seen.has(v) || depth > 12) return;
    seen.add(v);
    if (ArrayBuffer.isView(v)) {
      out.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1'));
      return;
    }
    if (v instanceof Error) {
      out.push(String(v), v.stack ?? '', safeJson(v), inspect(v, { showHidden: true, depth: 10, breakLength: Infinity }));
    } else if (depth === 0) {
      out.push(safeJson(v), inspect(v, { depth: 10, breakLength: Infinity }));
    }
    for (const key of Reflect.ownKeys(v)) {
      if (typeof key === 'string') out.push(key);
      const desc = Object.getOwnPropertyDescriptor(v, key);
      if (desc !== undefined && 'value' in desc) walk(desc.value, depth + 1);
    }
    if (v instanceof Map) for (const [k, x] of v) (walk(k, depth + 1), walk(x, depth + 1));
    if (v instanceof Set) for (const x of v) walk(x, depth + 1);
  };
  walk(value, 0);
  return out;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch (err) {
    return String(err);
  }
}

/** The secrets found anywhere in what `value` shows. */
export function leakedSecrets(value: unknown, secrets: readonly string[]): string[] {
  const texts = visibleTexts(value);
  return secrets.filter((s) => texts.some((t) => t.includes(s)));
}

/**
 * Fragments of a PEM block that must never be shown: three 24-character
 * slices of its base64 body (start, middle, end) and the base64 of the whole
 * PEM as a kubeconfig's `*-data` field holds it.
 */
export function pemFragments(pem: string): string[] {
  const body = pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  const mid = Math.floor(body.length / 2) - 12;
  return [body.slice(0, 24), body.slice(mid, mid + 24), body.slice(-24), Buffer.from(pem).toString('base64').slice(0, 40)];
}

/** A temporary directory holding one executable shell script; `remove()` deletes it. */
export function writeScript(name: string, script: string): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'rxkube-safety-'));
  const path = join(dir, name);
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** An exec plugin that prints `stdout` (and `stderr`) and exits with `code`. */
export function execPlugin(stdout: string, opts: { stderr?: string; code?: number } = {}): { path: string; remove: () => void } {
  const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
  return writeScript(
    'credential-plugin.sh',
    ['#!/bin/sh', `printf '%s' ${quote(stdout)}`, ...(opts.stderr === undefined ? [] : [`printf '%s' ${quote(opts.stderr)} >&2`]), `exit ${opts.code ?? 0}`, ''].join('\n'),
  );
}

/**
 * A kubeconfig YAML with one cluster, user and context. `cluster` and `user`
 * are the fields of each, written as given (values JSON-quoted, so any text
 * is safe YAML).
 */
export function kubeConfigYaml(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const fields = (o: Record<string, unknown>, indent: string): string[] =>
    Object.entries(o).map(([k, v]) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? `${indent}${k}:\n${fields(v as Record<string, unknown>, `${indent}  `).join('\n')}` : `${indent}${k}: ${JSON.stringify(v)}`));
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    ...fields(cluster, '    '),
    'users:',
    '- name: u',
    Object.keys(user).length === 0 ? '  user: {}' : '  user:',
    ...fields(user, '    '),
    'contexts:',
    '- name: x',
    '  context:',
    '    cluster: c',
    '    user: u',
    'current-context: x',
    '',
  ].join('\n');
}

/** Records what is written to stderr and stdout, and through console, until `stop()`; it is still written. */
export function captureOutput(): { text: () => string; stop: () => void } {
  const parts: string[] = [];
  const record = (chunk: unknown): void => {
    parts.push(typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : inspect(chunk));
  };
  const originals = { err: process.stderr.write, out: process.stdout.write };
  const wrap = (stream: NodeJS.WriteStream, original: typeof process.stderr.write): typeof process.stderr.write =>
    function (this: unknown, chunk: unknown, ...rest: unknown[]) {
      record(chunk);
      return (original as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
    } as typeof process.stderr.write;
  process.stderr.write = wrap(process.stderr, originals.err);
  process.stdout.write = wrap(process.stdout, originals.out);
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const consoleOriginals = methods.map((m) => console[m]);
  for (const m of methods) {
    const original = console[m];
    console[m] = (...args: unknown[]) => {
      for (const a of args) visibleTexts(a).forEach(record);
      original.apply(console, args);
    };
  }
  return {
    text: () => parts.join(''),
    stop: () => {
      process.stderr.write = originals.err;
      process.stdout.write = originals.out;
      methods.forEach((m, i) => (console[m] = consoleOriginals[i] as (typeof console)[typeof m]));
    },
  };
}
