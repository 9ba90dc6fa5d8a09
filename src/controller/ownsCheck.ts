import { ownerPointers, type ResolvedOwnerOptions } from '../operators/ownerKeys.js';
import { unwrapTombstone } from '../store/DeletedFinalStateUnknown.js';
import type { InformerEvent } from '../operators/informerEvent.js';
import type { KubeObject } from '../store/types.js';

// Owner kinds named in the report, at most.
const KINDS_SHOWN = 8;

/**
 * Notices an `owns` entry that never matches: once its source has synced,
 * if it holds objects with owner references and not one of them matched
 * the entry's kind, apiVersion (and `controller: true`), the entry is
 * almost certainly misspelt (`kind: 'widget'` for `Widget`), and every
 * change of the owned objects is silently dropped. That is reported once,
 * naming the owner kinds that were seen. A single match settles it for good.
 */
export class OwnsCheck {
  // `owns[i]` and what it asked for, for the message.
  readonly #where: string;
  readonly #asked: { readonly kind: string | undefined; readonly apiVersion: string | undefined };
  readonly #options: ResolvedOwnerOptions;
  readonly #sourceName: string;
  readonly #report: (err: Error) => void;
  // Set once a reference matched or the mismatch was reported: nothing more to look at.
  #decided = false;
  #synced = false;
  // Objects seen with owner references, and the distinct references they carry ("Kind apiVersion", controller or not).
  #withRefs = 0;
  readonly #seen = new Set<string>();

  constructor(
    where: string,
    asked: { readonly kind: string | undefined; readonly apiVersion: string | undefined },
    options: ResolvedOwnerOptions,
    sourceName: string,
    report: (err: Error) => void,
  ) {
    this.#where = where;
    this.#asked = asked;
    this.#options = options;
    this.#sourceName = sourceName;
    this.#report = report;
  }

  /** Looks at the owner references of an event's object. */
  see(event: InformerEvent<KubeObject>): void {
    if (this.#decided) return;
    const obj = event.type === 'delete' ? unwrapTombstone(event.obj) : event.obj;
    const refs = obj?.metadata?.ownerReferences;
    if (refs === undefined || refs.length === 0) return;
    if (ownerPointers(obj, this.#options).length > 0) {
      this.#decided = true;
      return;
    }
    this.#withRefs++;
    for (const ref of refs) {
      if (this.#seen.size >= KINDS_SHOWN) break;
      this.#seen.add(`${ref.kind} ${ref.apiVersion}${ref.controller === true ? '' : ' (not controller)'}`);
    }
    if (this.#synced) this.#conclude();
  }

  /** The source has synced: everything it listed has been seen. */
  synced(): void {
    this.#synced = true;
    if (!this.#decided) this.#conclude();
  }

  #conclude(): void {
    if (this.#withRefs === 0) return;
    this.#decided = true;
    const asked = [
      this.#asked.kind === undefined ? 'any kind' : `kind ${JSON.stringify(this.#asked.kind)}`,
      this.#asked.apiVersion === undefined ? 'any apiVersion' : `apiVersion ${JSON.stringify(this.#asked.apiVersion)}`,
      ...(this.#options.controllerOnly ? ['controller: true'] : []),
    ].join(', ');
    this.#report(
      new Error(
        `controller: ${this.#where} (${asked}) matches none of the owner references of the ${this.#withRefs} object(s) of ${this.#sourceName} that have some, ` +
          `so their changes enqueue nothing; they name: ${[...this.#seen].join(', ')}. Kind and apiVersion are compared exactly (the version part of apiVersion is ignored)`,
      ),
    );
  }
}
