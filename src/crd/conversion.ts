import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';

// A definition's `conversion` option (WH-40, WH-41): hub and spoke, every version but the storage version
// converted to and from it, checked when the definition is made.

/** One converter as the definition keeps it: what the user gave, typed for the webhook that calls it. */
export type Converter = (obj: Record<string, unknown>) => unknown;

/** The two converters of one version that is not the storage version. */
export interface VersionConverters {
  readonly toStorage: Converter;
  readonly fromStorage: Converter;
}

/** Converters by version name: every version except the storage version, each once. */
export type Converters = ReadonlyMap<string, VersionConverters>;

/**
 * `conversion` of `customResource`: for each version other than the
 * storage version, a converter to the storage version and one back.
 */
export type ConversionOptions<Objects, Storage extends keyof Objects> = {
  readonly [V in Exclude<keyof Objects & string, Storage>]: {
    /** Converts an object of this version into one of the storage version. */
    readonly toStorage: (obj: Objects[V]) => Objects[Storage];
    /** Converts an object of the storage version into one of this version. */
    readonly fromStorage: (obj: Objects[Storage]) => Objects[V];
  };
};

/** Reads and checks `conversion`: an entry of two functions for each version but `storage`, and nothing else. */
export function parseConversion(value: unknown, versions: readonly string[], storage: string): Converters {
  const others = versions.filter((v) => v !== storage);
  const shape = `{ ${others.map((v) => `${v}: { toStorage, fromStorage }`).join(', ')} }`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`customResource: conversion must be an object of converters by version, ${shape}, got ${describeValue(value)}`);
  }
  if (others.length === 0) throw new TypeError(`customResource: conversion needs a version besides the storage version ${storage}; a definition of one version has nothing to convert`);
  const record = value as Record<string, unknown>;
  const converters = new Map<string, VersionConverters>();
  for (const name of Object.keys(record)) {
    if (name === storage) {
      throw new TypeError(`customResource: conversion.${name}: ${name} is the storage version, which every conversion goes through; it takes no converters (give ${shape})`);
    }
    if (!others.includes(name)) throw new TypeError(`customResource: conversion.${JSON.stringify(name).slice(1, -1)}: no version of that name; the versions are ${versions.join(', ')}`);
  }
  for (const name of others) {
    const entry = record[name];
    if (entry === undefined) throw new TypeError(`customResource: conversion.${name} is missing: every version but the storage version ${storage} needs { toStorage, fromStorage }`);
    const fns = checkOptionNames(`customResource: conversion.${name}`, entry, optionNames<VersionConverters>({ toStorage: true, fromStorage: true }));
    for (const fn of ['toStorage', 'fromStorage'] as const) {
      if (typeof fns[fn] !== 'function') throw new TypeError(`customResource: conversion.${name}.${fn} must be a function, got ${describeValue(fns[fn])}`);
    }
    converters.set(name, Object.freeze({ toStorage: fns['toStorage'] as Converter, fromStorage: fns['fromStorage'] as Converter }));
  }
  return converters;
}

/** What the conversion webhook needs of a definition with converters. */
export interface DefinitionConversion {
  readonly group: string;
  readonly kind: string;
  /** The storage version's name: every conversion goes through it. */
  readonly storage: string;
  readonly versions: readonly string[];
  readonly converters: Converters;
}

/** The conversion of each definition view made with `conversion` (every view of one definition shares one). */
const conversions = new WeakMap<object, DefinitionConversion>();

/** Remembers `view` as a view of a definition with converters. */
export function registerConversion(view: object, conversion: DefinitionConversion): void {
  conversions.set(view, conversion);
}

/** The converters of a definition made by `customResource` with `conversion`, or undefined. */
export function conversionOf(resource: unknown): DefinitionConversion | undefined {
  return typeof resource === 'object' && resource !== null ? conversions.get(resource) : undefined;
}
