// JSON text of an object of any depth. Internal: kube-apiserver accepts
// objects nested up to 10,000 levels, and JSON.stringify, which recurses on the
// call stack, throws a RangeError at about 4,500 (Node's default stack), so a
// printer or a simulator that used it alone would die on an object the server
// holds.

/** A container being written: its keys (undefined for an array), the next index, and whether it is an array. */
interface Frame {
  readonly node: Record<string, unknown> | readonly unknown[];
  readonly keys: readonly string[] | undefined;
  index: number;
  wrote: boolean;
}

/** JSON.stringify's view of a value: `toJSON` applied (a Date becomes its string). */
function resolve(value: unknown, key: string): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  return value;
}

/** A plain object or an array: what is walked rather than handed to JSON.stringify whole. */
function isContainer(value: unknown): value is Record<string, unknown> | readonly unknown[] {
  if (value === null || typeof value !== 'object') return false;
  return !(value instanceof Number || value instanceof String || value instanceof Boolean);
}

/**
 * The same text as `JSON.stringify(value)` (no indentation, keys in the
 * same order, `toJSON` honoured, `undefined` and functions left out of
 * objects and `null` in arrays), for a value nested to any depth: the
 * common case is JSON.stringify itself; only when it runs out of stack is
 * the value walked with an explicit stack.
 *
 * @param value an object or array of JSON data.
 * @returns its JSON text.
 * @throws {TypeError} for a cycle or a BigInt, as JSON.stringify does.
 */
export function jsonText(value: object): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  return walk(value);
}

function walk(root: object): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  // Containers on the current path, so a cycle is refused rather than walked for ever.
  const open = new Set<object>();
  /** Writes a value; returns false when it is left out (undefined, a function, a symbol). */
  const write = (raw: unknown, key: string): boolean => {
    const value = resolve(raw, key);
    if (!isContainer(value)) {
      const text = JSON.stringify(value) as string | undefined;
      if (text === undefined) return false;
      out.push(text);
      return true;
    }
    if (open.has(value)) throw new TypeError('jsonText: the value holds a cycle');
    open.add(value);
    const isArray = Array.isArray(value);
    out.push(isArray ? '[' : '{');
    stack.push({ node: value, keys: isArray ? undefined : Object.keys(value), index: 0, wrote: false });
    return true;
  };
  write(root, '');
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    if (top.keys === undefined) {
      const items = top.node as readonly unknown[];
      if (top.index >= items.length) {
        out.push(']');
        open.delete(top.node);
        stack.pop();
        continue;
      }
      const i = top.index++;
      if (i > 0) out.push(',');
      if (!write(items[i], String(i))) out.push('null');
      continue;
    }
    if (top.index >= top.keys.length) {
      out.push('}');
      open.delete(top.node);
      stack.pop();
      continue;
    }
    const key = top.keys[top.index++] as string;
    const at = out.length;
    out.push(`${top.wrote ? ',' : ''}${JSON.stringify(key)}:`);
    if (write((top.node as Record<string, unknown>)[key], key)) top.wrote = true;
    else out.length = at;
  }
  return out.join('');
}
