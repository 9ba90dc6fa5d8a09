// kube-apiserver compiles every `pattern` of a CRD schema with Go's regexp package (RE2 syntax) and refuses
// the CRD when one does not compile. JavaScript patterns (zod's hostname, duration and emoji formats among
// them) often use syntax RE2 lacks; this finds it, so the definition fails where it is written (CR-28).

/** Why RE2 cannot compile `pattern`, or undefined when nothing RE2 lacks was found. */
export function re2Problem(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next)) return `a backreference (\\${next})`;
      if (next === 'k' && pattern[i + 2] === '<') return 'a named backreference (\\k<…>)';
      if (next === 'u') return 'a \\u escape (RE2 writes \\x{…})';
      if (next === 'c') return 'a control escape (\\c…)';
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      // A ']' right after '[' or '[^' is a literal member of the class.
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
      continue;
    }
    if (ch === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!')) return `a lookahead (?${rest[0]}…)`;
      if (rest === '<=' || rest === '<!') return `a lookbehind (?${rest}…)`;
      if (rest.startsWith('>')) return 'an atomic group (?>…)';
    }
  }
  return undefined;
}
