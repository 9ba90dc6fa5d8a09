/** One stored version of an object. Never mutated once built, so versions and their JSON can be shared freely. */
export interface StoredObject {
  readonly obj: Record<string, unknown>;
  /** The object serialised once, reused by every list and watch response. */
  readonly json: string;
  readonly rv: number;
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
}
