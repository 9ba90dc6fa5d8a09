import type { KubeObject } from '../store/types.js';
import type { AdmissionRequest, GroupVersionKind, GroupVersionResource, Operation, UserInfo } from './types.js';
import type { AdmissionVerdict } from './verdict.js';

/** What every handler gets, whatever the operation. */
export interface AdmissionContextBase {
  /** Who is writing. */
  readonly userInfo: UserInfo;
  /** True when nothing will be stored: do nothing you cannot undo. */
  readonly dryRun: boolean;
  /** The object's namespace; absent for cluster-scoped resources. */
  readonly namespace?: string;
  /** The object's name; `''` on a CREATE with `generateName`. */
  readonly name: string;
  /** The request's uid. */
  readonly uid: string;
  /** `status`, `scale`, … when the write is to a subresource. */
  readonly subResource?: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  /** The operation's options (CreateOptions, UpdateOptions, DeleteOptions). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** The whole request, as sent. */
  readonly request: AdmissionRequest;
  /** Aborts at the handler's deadline, or when kube-apiserver has gone. */
  readonly signal: AbortSignal;
}

/** What a handler gets for each operation: CREATE has the object, UPDATE both, DELETE the stored object only. */
export interface OperationContexts<T extends KubeObject> {
  CREATE: AdmissionContextBase & { readonly operation: 'CREATE'; readonly object: T; readonly oldObject: undefined };
  UPDATE: AdmissionContextBase & { readonly operation: 'UPDATE'; readonly object: T; readonly oldObject: T };
  DELETE: AdmissionContextBase & { readonly operation: 'DELETE'; readonly object: undefined; readonly oldObject: T };
  /** The object is the connect options (PodExecOptions, …), not a `T`. */
  CONNECT: AdmissionContextBase & { readonly operation: 'CONNECT'; readonly object: unknown; readonly oldObject: undefined };
}

/** The operations an `operations` option stands for: `'*'` is all four. */
export type OperationsOf<Op extends Operation | '*'> = '*' extends Op ? Operation : Exclude<Op, '*'>;

/**
 * A handler's argument for a webhook on `T` called for the operations `Op`:
 * a union by `operation`, so with the default CREATE and UPDATE `object` is
 * always a `T`, and a webhook that also sees DELETE must check first.
 */
export type AdmissionContext<T extends KubeObject, Op extends Operation = Operation> = OperationContexts<T>[Op];

/** A validating webhook's handler: a verdict, now or later. */
export type ValidatingHandler<T extends KubeObject, Op extends Operation = 'CREATE' | 'UPDATE'> = (
  ctx: AdmissionContext<T, Op>,
) => AdmissionVerdict | PromiseLike<AdmissionVerdict>;

/** A mutating webhook's handler: the object it wants stored (rxkube computes the patch), or a verdict. */
export type MutatingHandler<T extends KubeObject, Op extends Operation = 'CREATE' | 'UPDATE'> = (
  ctx: AdmissionContext<T, Op>,
) => T | AdmissionVerdict | PromiseLike<T | AdmissionVerdict>;

/** The handler's argument for a request already checked by readRequest. */
export function contextOf(request: AdmissionRequest, signal: AbortSignal, object: unknown): AdmissionContext<KubeObject> {
  return {
    operation: request.operation,
    object: object ?? undefined,
    oldObject: request.oldObject ?? undefined,
    userInfo: request.userInfo ?? {},
    dryRun: request.dryRun === true,
    ...(request.namespace === undefined || request.namespace === '' ? {} : { namespace: request.namespace }),
    name: request.name ?? '',
    uid: request.uid,
    ...(request.subResource === undefined || request.subResource === '' ? {} : { subResource: request.subResource }),
    kind: request.kind,
    resource: request.resource,
    ...(request.options === undefined || request.options === null ? {} : { options: request.options }),
    request,
    signal,
  } as AdmissionContext<KubeObject>;
}
