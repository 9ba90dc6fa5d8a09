import { printable } from '../../errors/printable.js';
import type { ResourceRegistry } from '../storage/registry.js';
import type { ResourceType } from '../storage/resources.js';
import type { Storage } from '../storage/storage.js';
import { StatusError } from '../server/status.js';
import { jsonPatch } from '../writes/patch.js';
import { jsonEqual } from '../writes/objectRules.js';
import { configurationTypes, MUTATING_RESOURCE, registeredWebhooks, VALIDATING_RESOURCE, type RegisteredWebhook } from './configurations.js';
import { matchedResource, namespaceSelected, objectSelected, type AdmissionAttributes } from './matching.js';
import { admissionReview, CallFailure, callWebhook, type WebhookVerdict } from './review.js';
import { convertObjects, crdConversionWebhook } from './conversion.js';

// kube-apiserver's two webhook admission plugins over the simulator's storage: mutating webhooks one after another
// (reinvoked once when asked to), validating webhooks all at once.

type AnyObject = Record<string, unknown>;

/** Tells the request's client a warning (a `Warning: 299 - "…"` header). */
export type Warn = (text: string) => void;

/** The webhooks of the stored configurations, called for the requests they register for. */
export class WebhookAdmission {
  // Where configurations and namespaces are read.
  readonly #storage: Storage;
  // For the equivalent versions of a custom resource and the namespaces resource.
  readonly #registry: ResourceRegistry;
  /** The validating and mutating configuration resources, to register. */
  readonly types: readonly ResourceType[];

  constructor(storage: Storage, registry: ResourceRegistry) {
    this.#storage = storage;
    this.#registry = registry;
    this.types = configurationTypes();
  }

  #configType(id: string): ResourceType {
    return this.types.find((t) => t.id === id) as ResourceType;
  }

  /**
   * Whether a write to `type` may reach a webhook: some configuration is
   * stored and the resource is not a configuration itself (kube-apiserver
   * never sends those to webhooks, so a broken webhook can always be removed).
   */
  concerns(type: ResourceType): boolean {
    if (this.types.some((t) => t.id === type.id)) return false;
    return this.types.some((t) => this.#storage.list(t).length > 0);
  }

  /** Whether `w` is called for the request, and for which version of its resource. */
  #match(w: RegisteredWebhook, a: AdmissionAttributes, object: AnyObject | undefined): ResourceType | undefined {
    const as = matchedResource(w, a, this.#registry);
    if (as === undefined) return undefined;
    const now = { ...a, object };
    const namespace = namespaceSelected(w, now, this.#storage, this.#registry);
    if (namespace === false || !objectSelected(w, now)) return undefined;
    // A missing namespace fails the request whatever the failure policy, once the webhook would otherwise be called.
    if (namespace instanceof StatusError) throw namespace;
    return as;
  }

  /**
   * Calls one webhook and applies its failure policy: a call failure is the
   * request's 500 under `Fail` and nothing under `Ignore`; a denial is the
   * webhook's refusal whatever the policy. Undefined: the call was skipped or
   * failed open.
   */
  async #call(w: RegisteredWebhook, review: AnyObject, warn: Warn): Promise<WebhookVerdict | undefined> {
    if (w.url === undefined) {
      warn(`webhook ${JSON.stringify(w.name)} was not called: a service clientConfig cannot be reached from the simulator; register it with a url`);
      return undefined;
    }
    let verdict: WebhookVerdict;
    try {
      verdict = await callWebhook(w, review);
    } catch (err) {
      if (err instanceof CallFailure) {
        if (w.failurePolicy === 'Ignore') return undefined;
        throw err.status();
      }
      throw err;
    }
    for (const text of verdict.warnings) warn(text);
    if (!verdict.allowed) throw verdict.denial;
    return verdict;
  }

  /**
   * Runs the mutating webhooks over the request's object in kube-apiserver's
   * order (configurations by name, webhooks in order), each seeing what the
   * ones before it patched; then once more the `IfNeeded` webhooks that ran
   * before a later one changed the object. Returns the object to store.
   */
  async mutate(a: AdmissionAttributes, warn: Warn): Promise<AnyObject | undefined> {
    const hooks = registeredWebhooks(this.#storage, this.#configType(MUTATING_RESOURCE), 'mutating');
    let object = a.object;
    const reinvoke = new Set<RegisteredWebhook>();
    const invoked: RegisteredWebhook[] = [];
    for (const w of hooks) {
      const [next, changed, called] = await this.#mutateOnce(w, a, object, warn);
      object = next;
      if (changed) for (const earlier of invoked) reinvoke.add(earlier);
      if (called && w.reinvocationPolicy === 'IfNeeded') invoked.push(w);
    }
    for (const w of hooks) if (reinvoke.has(w)) [object] = await this.#mutateOnce(w, a, object, warn);
    return object;
  }

  async #mutateOnce(w: RegisteredWebhook, a: AdmissionAttributes, object: AnyObject | undefined, warn: Warn): Promise<[AnyObject | undefined, boolean, boolean]> {
    const as = this.#match(w, a, object);
    if (as === undefined) return [object, false, false];
    const [sent, old] = await this.#inVersion(a, as, [object, a.oldObject]);
    const verdict = await this.#call(w, admissionReview(a, as, sent, old), warn);
    if (verdict?.patch === undefined || verdict.patch.length === 0) return [object, false, true];
    if (object === undefined || sent === undefined) throw new StatusError(400, 'BadRequest', `admission webhook ${JSON.stringify(w.name)} attempted to modify the object, which is not supported for this operation`);
    let patched: unknown;
    try {
      patched = jsonPatch(sent, verdict.patch);
    } catch (err) {
      throw new StatusError(500, 'InternalError', `Internal error occurred: ${printable((err instanceof Error ? err.message : String(err)).slice(0, 500))}`);
    }
    if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) throw new StatusError(500, 'InternalError', 'Internal error occurred: the patched object is not a JSON object');
    const [back] = (await this.#inVersion(a, a.type, [patched as AnyObject], as)) as [AnyObject];
    // A patched object is defaulted again, as kube-apiserver defaults after each patch (a Scale has no schema here).
    const next = a.kind === undefined && a.type.decode !== undefined ? a.type.decode(back) : back;
    return [next, !jsonEqual(object, next), true];
  }

  /**
   * Objects of the request as a webhook matched for `to` is sent them: as
   * they are for the version requested (and for a Scale), else converted by
   * the CRD's conversion webhook, else with their apiVersion rewritten (the
   * `None` conversion). `from` is the version they are in.
   */
  async #inVersion(a: AdmissionAttributes, to: ResourceType, objects: (AnyObject | undefined)[], from: ResourceType = a.type): Promise<(AnyObject | undefined)[]> {
    if (to === from || a.kind !== undefined) return objects;
    const webhook = crdConversionWebhook(this.#storage, this.#registry, to);
    const present = objects.filter((o): o is AnyObject => o !== undefined).map((o) => ({ ...o, apiVersion: o['apiVersion'] === to.apiVersion ? o['apiVersion'] : from.apiVersion }));
    const converted = webhook === undefined ? present.map((o) => ({ ...o, apiVersion: to.apiVersion })) : await convertObjects(webhook, present, to.apiVersion);
    let next = 0;
    return objects.map((o) => (o === undefined ? undefined : converted[next++]));
  }

  /**
   * Calls every matching validating webhook at once with the object as it
   * would be stored; when some refuse, the first refusal in webhook order is
   * the answer (kube-apiserver answers whichever arrives first).
   */
  async validate(a: AdmissionAttributes, warn: Warn): Promise<void> {
    const hooks = registeredWebhooks(this.#storage, this.#configType(VALIDATING_RESOURCE), 'validating');
    const calls = hooks.map(async (w) => {
      const as = this.#match(w, a, a.object);
      if (as === undefined) return;
      const [object, old] = await this.#inVersion(a, as, [a.object, a.oldObject]);
      await this.#call(w, admissionReview(a, as, object, old), warn);
    });
    const results = await Promise.allSettled(calls);
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (refused !== undefined) throw refused.reason;
  }
}
