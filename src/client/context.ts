import type { KubeConfig } from '@kubernetes/client-node';
import type { ParsedResource } from '../sources/resourceRef.js';
import type { CallOptions, DeleteOptions, WriteOptions } from './types.js';

// The context the verbs of one object client share, apart from the client that builds it, so that the
// verbs' files (apply, list, status) and the client import it and none imports another.

/** What the calls of one object client share (internal): where they go, with which credentials, and the write defaults. */
export interface ClientContext {
  readonly resource: ParsedResource;
  /** The client's namespace; undefined for cluster scope, or for a client of every namespace that takes it from each object (CR-110). */
  readonly namespace: string | undefined;
  readonly kc: KubeConfig;
  /** The kubeconfig requests are authenticated with (plain HTTP allowed for the simulator). */
  readonly auth: KubeConfig;
  readonly timeoutMs: number;
  readonly fieldManager: string;
  readonly dryRun: boolean;
  /** The write log's name for this cluster and resource (RYW-1). */
  readonly written: string;
  /** `sendWrite` for this client: the way every write goes. */
  write<R>(req: WriteRequest): Promise<R>;
  /** `sendRead` for this client. */
  read<R>(url: string, what: string, o: CallOptions | undefined): Promise<R>;
  /** The collection's URL in `namespace`: `https://host/api/v1/namespaces/ns/pods`. */
  collectionUrl(namespace: string | undefined): string;
  /** The URL of one object, or of its status subresource; a bad name throws. */
  itemUrl(name: unknown, namespace: string | undefined, subresource?: 'status'): string;
  /** The namespace a call on `name` acts in: the client's; a namespaced resource without one throws (CR-111). */
  namespaceByName(verb: string, name: unknown): string | undefined;
  /** The namespace a call on an object acts in: the client's or the object's, which must agree (CR-110, CR-112). */
  namespaceOf(verb: string, name: unknown, objectNamespace: unknown): string | undefined;
  /** `replace v1/configmaps default/x`: what a call is, for its error messages. */
  describe(verb: string, name: unknown, namespace: string | undefined): string;
}

/** One write of an object client: every verb that changes something is one of these. */
export interface WriteRequest {
  readonly verb: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly url: string;
  /** `apply v1/configmaps default/x`: the start of every error message. */
  readonly what: string;
  readonly body: unknown;
  readonly contentType?: string;
  readonly opts: WriteOptions | DeleteOptions | undefined;
  /** Sends `force=true` (server-side apply only). */
  readonly force?: boolean;
  /** The namespace the request goes to, for the write log. */
  readonly namespace: string | undefined;
  /** The object's name, for the write log when the answer is a Status that may not carry it (a deletion). */
  readonly name?: string;
}
