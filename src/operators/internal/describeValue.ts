/** Names a bad option value in a TypeError message without throwing on exotic values. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  try {
    return String(value);
  } catch {
    return typeof value;
  }
}
