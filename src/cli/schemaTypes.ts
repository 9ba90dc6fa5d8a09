/**
 * TypeScript declarations from a CRD's OpenAPI v3 schema, for `rxkube crd
 * types`: an interface per object with properties (named after its path),
 * string-literal unions for enums, `number | string` for int-or-string,
 * `| null` for nullable, `Record` for maps and for objects that keep unknown
 * fields, optional members unless required, descriptions as doc comments
 * (semantics CR-93…CR-98).
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The declarations written so far, and the names they took (shared by every version and CRD of one module). */
export class Declarations {
  // In reading order: a parent's slot is taken before its children are written.
  readonly #texts: string[] = [];
  // Names already declared, so a second `PrivateKey` becomes `PrivateKey2` instead of a duplicate.
  readonly #names = new Set<string>();

  /** Reserves a unique name built from `wanted`. */
  name(wanted: string): string {
    let name = wanted;
    for (let i = 2; this.#names.has(name); i++) name = `${wanted}${i}`;
    this.#names.add(name);
    return name;
  }

  /** Reserves a place for a declaration written later, so parents come before their children. */
  slot(): (text: string) => void {
    const at = this.#texts.push('') - 1;
    return (text) => {
      this.#texts[at] = text;
    };
  }

  /** Every declaration, separated by blank lines. */
  text(): string {
    return this.#texts.filter((t) => t !== '').join('\n\n');
  }
}

/**
 * `privateKey` → `PrivateKey`, `x-forwarded-for` → `XForwardedFor`: a name part for a type.
 *
 * @param text a property or kind name.
 * @returns the PascalCase part (`T` before a leading digit; `Field` when nothing is left).
 */
export function pascal(text: string): string {
  const name = text
    .split(/[^A-Za-z0-9]+/)
    .filter((p) => p !== '')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
  return name === '' ? 'Field' : /^\d/.test(name) ? `T${name}` : name;
}

/**
 * A doc comment from a schema's description, indented; empty when there is none.
 *
 * @param description the description, if a string.
 * @param indent the spaces before each line.
 * @returns the comment with its trailing newline, or ''.
 */
export function docComment(description: unknown, indent: string): string {
  if (typeof description !== 'string' || description.trim() === '') return '';
  // `*/` would end the comment early; a control character (C0, C1, bidirectional) is noise in a comment and a hazard on a terminal.
  const lines = description
    .replace(/\*\//g, '*\\/')
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, ' ')
    .trim()
    .split('\n')
    .map((l) => l.trimEnd());
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => (l === '' ? `${indent} *` : `${indent} * ${l}`)).join('\n')}\n${indent} */\n`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A string as a single-quoted TypeScript literal (JSON's escapes, so no character can end it early).
 *
 * @param text the string.
 * @returns the literal.
 */
export function tsString(text: string): string {
  // JSON escapes the C0 controls; DEL, C1 and the bidirectional controls are escaped too, so the module is safe on a terminal.
  const body = JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'");
  return `'${body.replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}'`;
}

/**
 * A property name as a member or object key: bare when it is an identifier, quoted otherwise.
 *
 * @param name the property name.
 * @returns the key's text.
 */
export function memberKey(name: string): string {
  return IDENTIFIER.test(name) ? name : tsString(name);
}

/** An enum's values as a union, or undefined when one is not a string, number, boolean or null. */
function enumUnion(values: readonly unknown[]): string | undefined {
  if (values.length === 0) return undefined;
  const parts: string[] = [];
  for (const v of values) {
    if (v === null) parts.push('null');
    else if (typeof v === 'string') parts.push(tsString(v));
    else if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) parts.push(JSON.stringify(v));
    else return undefined;
  }
  return [...new Set(parts)].join(' | ');
}

/** `T[]`, parenthesised when T is a union. */
function arrayOf(element: string): string {
  return / \| /.test(element) ? `(${element})[]` : `${element}[]`;
}

/** The TypeScript type of a schema node, declaring interfaces for the objects inside it under names from `hint`. */
function typeOf(schema: unknown, hint: string, decls: Declarations): string {
  if (!isObject(schema)) return 'unknown';
  const base = baseType(schema, hint, decls);
  return schema['nullable'] === true && base !== 'unknown' && !/(^| )null( |$)/.test(base) ? `${base} | null` : base;
}

function baseType(s: Json, hint: string, decls: Declarations): string {
  if (s['x-kubernetes-int-or-string'] === true) return 'number | string';
  const union = Array.isArray(s['enum']) ? enumUnion(s['enum']) : undefined;
  if (union !== undefined) return union;
  switch (s['type']) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return arrayOf(s['items'] === undefined ? 'unknown' : typeOf(s['items'], hint, decls));
    case 'object':
      return objectType(s, hint, decls);
    default:
      if (isObject(s['properties'])) return objectType(s, hint, decls);
      return s['x-kubernetes-embedded-resource'] === true ? 'Record<string, unknown>' : 'unknown';
  }
}

/** True when an object schema admits fields beyond its properties. */
function keepsMore(s: Json): boolean {
  const additional = s['additionalProperties'];
  return isObject(additional) || additional === true || s['x-kubernetes-preserve-unknown-fields'] === true || s['x-kubernetes-embedded-resource'] === true;
}

/** An interface for an object with properties; else a map of what `additionalProperties` says, or of anything. */
function objectType(s: Json, hint: string, decls: Declarations): string {
  if (isObject(s['properties']) && Object.keys(s['properties']).length > 0) return declareInterface(s, hint, decls);
  const additional = s['additionalProperties'];
  return `Record<string, ${isObject(additional) ? typeOf(additional, `${hint}Value`, decls) : 'unknown'}>`;
}

/** Declares an interface for an object schema with properties, named after `wanted`; returns the name it took. */
function declareInterface(s: Json, wanted: string, decls: Declarations): string {
  const name = decls.name(wanted);
  const write = decls.slot();
  const properties = isObject(s['properties']) ? s['properties'] : {};
  const required = new Set(Array.isArray(s['required']) ? s['required'].filter((r): r is string => typeof r === 'string') : []);
  const members = Object.entries(properties).map(([key, schema]) => {
    const type = typeOf(schema, `${name}${pascal(key)}`, decls);
    return `${docComment(isObject(schema) ? schema['description'] : undefined, '  ')}  ${memberKey(key)}${required.has(key) ? '' : '?'}: ${type};`;
  });
  // An index signature must admit every member's type, so fields beyond the named ones are unknown, whatever a map says of them.
  if (keepsMore(s)) members.push('  [field: string]: unknown;');
  write(`${docComment(s['description'], '')}export interface ${name} {\n${members.join('\n')}\n}`);
  return name;
}

/**
 * Declares the type of a top-level field (`spec`, `status`) under exactly `wanted`
 * when possible: an interface for an object with properties, an alias otherwise.
 *
 * @param schema the field's schema.
 * @param wanted the name (`CertificateSpec`).
 * @param decls where it is declared.
 * @returns the name it took.
 */
export function declareRoot(schema: unknown, wanted: string, decls: Declarations): string {
  if (isObject(schema) && isObject(schema['properties']) && Object.keys(schema['properties']).length > 0 && schema['nullable'] !== true) {
    return declareInterface(schema, wanted, decls);
  }
  const name = decls.name(wanted);
  const write = decls.slot();
  write(`${docComment(isObject(schema) ? schema['description'] : undefined, '')}export type ${name} = ${typeOf(schema, name, decls)};`);
  return name;
}
