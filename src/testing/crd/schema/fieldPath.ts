// apimachinery's field.Path as a string: a child is `.name` (no dot at the start), a map key
// `[key]`, a list index `[0]`; the empty path is the object itself.

/** `path.Child(name)`. */
export function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** `path.Key(key)`. */
export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}

/** `path.Index(i)`. */
export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}
