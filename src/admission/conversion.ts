import { CallbackError } from '../errors/CallbackError.js';
import { printable } from '../errors/printable.js';
import { reportError } from '../errors/reportError.js';
import { checkOptionNames, describeValue, optionNames } from '../options/validate.js';
import { conversionOf, type Converter, type DefinitionConversion } from '../crd/conversion.js';
import { DEFAULT_CONVERSION_PATH } from '../crd/crdConversion.js';
import { pathProblem } from '../crd/webhookPath.js';
import type { CustomResource } from '../crd/customResource.js';
import { convertedMetadataProblem } from './convertedMetadata.js';
import type { Webhook, WebhookAnswer } from './types.js';
import { isRecord } from '../crd/schemaNodes.js';

// The conversion webhook (WH-45…WH-52): apiextensions.k8s.io/v1 ConversionReview in and out, each object
// converted through the storage version with the definition's converters.

/** Options of {@link conversionWebhook}, given as its last argument. */
export interface ConversionWebhookOptions {
  /**
   * The path the webhook is served at.
   * @default '/convert'
   */
  readonly path?: string;
}

/** A conversion webhook's answer. */
type ConversionAnswer = Awaited<ReturnType<ConversionWebhook['review']>>;

/** A webhook that answers ConversionReviews for custom resources with converters. */
export interface ConversionWebhook extends Webhook {
  readonly type: 'conversion';
  /** The group and kind of each definition it converts, in the order given: `webhookManifests` points their CRDs at its path. */
  readonly converts: readonly { readonly group: string; readonly kind: string }[];
  /** Answers a ConversionReview; `failure` is `'threw'` when a converter threw and the review failed because of it, for the server's metrics. */
  review(body: unknown, signal: AbortSignal): Promise<WebhookAnswer & { readonly failure?: 'threw' }>;
}

const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';
/** Bound on what of a request (a name, an apiVersion, a thrown message) a message quotes. */
const MAX_QUOTED = 256;

/**
 * A conversion webhook for custom resources defined with converters: the
 * runner serves it (`runManager({ webhooks: [...] })`) and the CRD's
 * `spec.conversion` (`Website.crd({ conversionWebhook })`) points the API
 * server at it.
 *
 * It answers an `apiextensions.k8s.io/v1` ConversionReview: each object is
 * converted to `desiredAPIVersion` through the storage version — the
 * object's own version's `toStorage`, then the desired version's
 * `fromStorage` — as kubebuilder's hub and spokes do. A converter may change
 * the labels and annotations, and no other metadata. A converter that
 * throws, changes other metadata, or an object of a kind or version the
 * webhook does not know, fails the whole review (`result.status:
 * 'Failure'` with a message naming the object); a body that is not a
 * ConversionReview is answered 400.
 *
 * ## Example
 * ```ts
 * import { z } from 'zod';
 * import { customResource } from 'rxkube';
 * import { conversionWebhook } from 'rxkube/core';
 *
 * const Website = customResource({
 *   group: 'example.com', kind: 'Website',
 *   versions: {
 *     v1: { spec: z.object({ image: z.string(), replicas: z.number().int() }) },
 *     v2: { spec: z.object({ image: z.string(), scale: z.number().int() }), storage: true }, // replicas renamed
 *   },
 *   conversion: {
 *     v1: {
 *       toStorage: ({ metadata, spec }) => ({ apiVersion: 'example.com/v2', kind: 'Website', metadata, spec: { image: spec.image, scale: spec.replicas } }),
 *       fromStorage: ({ metadata, spec }) => ({ apiVersion: 'example.com/v1', kind: 'Website', metadata, spec: { image: spec.image, replicas: spec.scale } }),
 *     },
 *   },
 * });
 * const convert = conversionWebhook(Website);
 * console.log(convert.path); // /convert
 * ```
 *
 * @param definitions The definitions (each made with `conversion`, each kind once), then optionally `{ path }`.
 * @returns The webhook.
 * @throws TypeError for no definition, a definition without `conversion`, a kind given twice, or a bad path.
 */
export function conversionWebhook(...definitions: readonly [CustomResource<any, any, true>, ...CustomResource<any, any, true>[]]): ConversionWebhook;
export function conversionWebhook(
  ...definitions: [definition: CustomResource<any, any, true>, ...definitions: CustomResource<any, any, true>[], options: ConversionWebhookOptions]
): ConversionWebhook;
export function conversionWebhook(...args: readonly unknown[]): ConversionWebhook {
  const { conversions, path } = readArguments(args);
  return Object.freeze({
    type: 'conversion' as const,
    path,
    converts: Object.freeze([...conversions.values()].map((c) => Object.freeze({ group: c.group, kind: c.kind }))),
    review: (body: unknown, signal: AbortSignal): Promise<ConversionAnswer> => Promise.resolve(guardedAnswer(conversions, body, signal)),
  });
}

function readArguments(args: readonly unknown[]): { conversions: ReadonlyMap<string, DefinitionConversion>; path: string } {
  const last = args[args.length - 1];
  const hasOptions = isPlainObject(last) && conversionOf(last) === undefined && !isDefinitionLike(last);
  const options = hasOptions ? checkOptionNames('admission.conversion', last, optionNames<ConversionWebhookOptions>({ path: true })) : {};
  const definitions = hasOptions ? args.slice(0, -1) : args;
  if (definitions.length === 0) throw new TypeError('admission.conversion: give at least one definition made by customResource() with a conversion option');
  const conversions = new Map<string, DefinitionConversion>();
  definitions.forEach((d, i) => {
    const conversion = conversionOf(d);
    if (conversion === undefined) {
      throw new TypeError(
        isDefinitionLike(d)
          ? `admission.conversion: definitions[${i}] (${(d as { kind: string }).kind}) has no conversion option; give customResource({ versions, conversion: { <version>: { toStorage, fromStorage } } })`
          : `admission.conversion: definitions[${i}] must be a definition made by customResource() with a conversion option, got ${describeValue(d)}`,
      );
    }
    const key = `${conversion.group}/${conversion.kind}`;
    const other = conversions.get(key);
    if (other !== undefined && other !== conversion) throw new TypeError(`admission.conversion: definitions[${i}] is a second definition of ${conversion.kind} in ${conversion.group}; give each kind once`);
    conversions.set(key, conversion);
  });
  const path = options['path'] ?? DEFAULT_CONVERSION_PATH;
  const problem = typeof path === 'string' ? pathProblem(path) : 'must be a string';
  if (problem !== undefined) throw new TypeError(`admission.conversion: path ${problem} (kube-apiserver checks each segment), got ${describeValue(path)}`);
  return { conversions, path: path as string };
}

function isPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isDefinitionLike(value: unknown): boolean {
  const v = value as { crd?: unknown; kind?: unknown } | null | undefined;
  return typeof v?.crd === 'function' && typeof v.kind === 'string';
}

interface Review {
  readonly uid: string;
  readonly desiredAPIVersion: string;
  readonly objects: readonly unknown[];
}

/** Why a converted object cannot be answered, and whether a converter threw. */
class Refusal {
  readonly message: string;
  readonly threw: boolean;
  constructor(message: string, threw: boolean) {
    this.message = message;
    this.threw = threw;
  }
}

/** The answer, or a 500 when the body is something a server's JSON.parse cannot give (a function, a getter that throws). */
function guardedAnswer(conversions: ReadonlyMap<string, DefinitionConversion>, body: unknown, signal: AbortSignal): ConversionAnswer {
  try {
    return answer(conversions, body, signal);
  } catch (err) {
    reportError(new CallbackError('admission.conversion', 'the review could not be answered', err));
    return { status: 500, body: { apiVersion: 'v1', kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500, message: 'the conversion webhook could not read the request' } };
  }
}

function answer(conversions: ReadonlyMap<string, DefinitionConversion>, body: unknown, signal: AbortSignal): ConversionAnswer {
  const review = readReview(body);
  if (typeof review === 'string') {
    return { status: 400, body: { apiVersion: 'v1', kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message: review } };
  }
  const converted: unknown[] = [];
  for (const [i, obj] of review.objects.entries()) {
    const out = signal.aborted ? new Refusal(`the request was aborted before objects[${i}] was converted`, false) : convertOne(conversions, obj, review.desiredAPIVersion);
    if (out instanceof Refusal) {
      const message = `objects[${i}]${nameOf(obj)}: ${out.message}`;
      return { status: 200, body: reviewResponse(review.uid, [], { status: 'Failure', message }), ...(out.threw ? { failure: 'threw' as const } : {}) };
    }
    converted.push(out);
  }
  return { status: 200, body: reviewResponse(review.uid, converted, { status: 'Success' }) };
}

function reviewResponse(uid: string, convertedObjects: readonly unknown[], result: { status: 'Success' | 'Failure'; message?: string }): object {
  return { apiVersion: REVIEW_API_VERSION, kind: 'ConversionReview', response: { uid, convertedObjects, result } };
}

/** The review's request, or why the body is not a ConversionReview. */
function readReview(body: unknown): Review | string {
  if (!isRecord(body)) return `expected a ConversionReview object, got ${body === undefined ? 'no JSON' : quote(body)}`;
  if (body['kind'] !== 'ConversionReview' || body['apiVersion'] !== REVIEW_API_VERSION) {
    return `expected kind ConversionReview of apiVersion ${REVIEW_API_VERSION} (the CRD asks for conversionReviewVersions ['v1']), got ${quote(body['kind'])} of ${quote(body['apiVersion'])}`;
  }
  const request = body['request'];
  if (!isRecord(request)) return 'the ConversionReview has no request';
  const { uid, desiredAPIVersion, objects } = request;
  if (typeof uid !== 'string' || uid === '') return 'request.uid must be a non-empty string';
  if (typeof desiredAPIVersion !== 'string' || desiredAPIVersion === '') return 'request.desiredAPIVersion must be a non-empty string';
  if (!Array.isArray(objects)) return 'request.objects must be an array';
  return { uid, desiredAPIVersion, objects };
}

function convertOne(conversions: ReadonlyMap<string, DefinitionConversion>, obj: unknown, desiredAPIVersion: string): unknown {
  if (!isRecord(obj) || typeof obj['apiVersion'] !== 'string' || typeof obj['kind'] !== 'string') return new Refusal('expected an object with an apiVersion and a kind', false);
  const [group, from] = splitApiVersion(obj['apiVersion']);
  const conversion = conversions.get(`${group}/${obj['kind']}`);
  if (conversion === undefined) {
    const known = [...conversions.values()].map((c) => `${c.kind} of ${c.group}`).join(', ');
    return new Refusal(`this webhook has no converters for kind ${quote(obj['kind'])} of ${quote(obj['apiVersion'])}; it converts ${known}`, false);
  }
  const [desiredGroup, to] = splitApiVersion(desiredAPIVersion);
  const versions = conversion.versions.join(', ');
  if (!conversion.versions.includes(from)) return new Refusal(`${conversion.kind} has no version ${quote(from)} (its versions: ${versions})`, false);
  if (desiredGroup !== group || !conversion.versions.includes(to)) {
    return new Refusal(`desiredAPIVersion ${quote(desiredAPIVersion)} is not a version of ${conversion.kind} (its versions: ${versions} of ${conversion.group})`, false);
  }
  if (from === to) return obj;
  let current: Record<string, unknown> | Refusal = obj;
  if (from !== conversion.storage) current = step(conversion, current, from, 'toStorage', conversion.storage);
  if (!(current instanceof Refusal) && to !== conversion.storage) current = step(conversion, current, to, 'fromStorage', to);
  return current;
}

/** Runs one converter on a copy of `input` and checks what it returns. */
function step(conversion: DefinitionConversion, input: Record<string, unknown>, version: string, direction: 'toStorage' | 'fromStorage', target: string): Record<string, unknown> | Refusal {
  const converter = conversion.converters.get(version)?.[direction] as Converter;
  const what = `${conversion.kind} ${version} ${direction}`;
  const copy = structuredClone(input);
  let result: unknown;
  try {
    result = converter(copy);
  } catch (err) {
    reportError(new CallbackError('admission.conversion', `${what} threw converting ${nameOf(input).trim() || 'an object'}`, err));
    return new Refusal(`${what} threw: ${quoteText(err instanceof Error ? `${err.name}: ${err.message}` : String(err))}`, true);
  }
  const checked = checkedResult(conversion.kind, input, result);
  if (typeof checked === 'string') {
    reportError(new CallbackError('admission.conversion', `${what} returned an object the API server would refuse`, new Error(checked)));
    return new Refusal(`${what} ${checked}`, false);
  }
  const { apiVersion: _ignored, ...rest } = checked;
  return { apiVersion: `${conversion.group}/${target}`, ...rest };
}

/** The converter's result as JSON (what the API server will read), or why it cannot be answered. */
function checkedResult(kind: string, input: Record<string, unknown>, result: unknown): Record<string, unknown> | string {
  if (typeof (result as { then?: unknown } | null)?.then === 'function') return 'returned a Promise; converters are synchronous';
  if (!isRecord(result)) return `returned ${quote(result)}, not an object`;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
  } catch (err) {
    return `returned an object that is not JSON: ${quoteText(err instanceof Error ? err.message : String(err))}`;
  }
  if (json['kind'] !== kind) return `changed kind to ${quote(json['kind'])}; a converted object keeps its kind`;
  return convertedMetadataProblem(input['metadata'], json['metadata']) ?? json;
}

function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** ` (namespace/name)` of an object from the request, bounded and escaped; '' when it has none. */
function nameOf(obj: unknown): string {
  const metadata = isRecord(obj) && isRecord(obj['metadata']) ? obj['metadata'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  if (name === '') return '';
  return ` (${quoteText(namespace === '' ? name : `${namespace}/${name}`)})`;
}

/** A value from the request in a message: a string quoted, bounded and escaped; anything else by its type only, since an object's keys are the sender's. */
function quote(value: unknown): string {
  if (typeof value === 'string') return `"${quoteText(value)}"`;
  if (value === undefined) return 'none';
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`;
}

function quoteText(text: string): string {
  return printable(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text);
}
