import { createRequire } from 'node:module';

// A CEL rule that does not parse makes kube-apiserver refuse the CRD; parsing it here names the field at
// definition time (CR-29). The parser is loaded on the first rule, synchronously, so a program whose
// definitions have no rules never loads it (it takes a few hundred milliseconds).

type Parse = (expression: string) => unknown;

let parse: Parse | undefined;

/** Why `expression` does not parse as CEL, or undefined when it does. */
export function celSyntaxProblem(expression: string): string | undefined {
  parse ??= (createRequire(import.meta.url)('@bufbuild/cel') as { parse: Parse }).parse;
  try {
    parse(expression);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^<input>:/, '') : String(err);
  }
}
