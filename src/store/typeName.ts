// How argument errors name the type of a wrong value ("null", "an array",
// or its typeof). Internal: shared by the indexer's checks.

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}
