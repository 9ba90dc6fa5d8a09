import type { ServerResponse } from 'node:http';
import type { FaultBoard } from './faults/faults.js';
import type { AuditEvent } from './options.js';
import type { AccessAttributes, AccessDecision, UserInfo } from './auth/users.js';
import type { NamespaceLifecycle } from './storage/namespaceLifecycle.js';
import type { ResourceRegistry } from './storage/registry.js';
import type { Storage } from './storage/storage.js';
import type { WatchHub } from './watch/watch.js';
import type { WebhookAdmission } from './admission/dispatch.js';

/** What the request handlers of one simulator share: its state and its settings. */
export interface ServerContext {
  readonly storage: Storage;
  readonly registry: ResourceRegistry;
  readonly faults: FaultBoard;
  /** Every open watch, fed synchronously by the storage on each write. */
  readonly hub: WatchHub;
  /** Deletes objects, namespaces through their lifecycle. */
  readonly namespaces: NamespaceLifecycle;
  /** The bearer tokens a request may carry, when authentication is on; tokens are added and revoked while serving. */
  readonly tokens: Set<string> | undefined;
  /** The users known by their tokens besides the admin's. */
  readonly users: ReadonlyMap<string, UserInfo>;
  /** Decides SubjectAccessReviews; undefined: the default decision. */
  readonly authorize: ((attributes: AccessAttributes) => AccessDecision) | undefined;
  /** The admission webhooks the stored configurations register. */
  readonly admission: WebhookAdmission;
  /** Whether responses over 128 KiB are gzipped for clients that accept it (never watches). */
  readonly compression: boolean;
  /** False acts like a server without the WatchList feature gate. */
  readonly watchList: boolean;
  /** Requests parked by the stall fault; they hold their sockets until the client gives up or the server stops. */
  readonly stalled: Set<ServerResponse>;
  /** Told of every answered request on one object. */
  readonly audit: ((event: AuditEvent) => void) | undefined;
  /** The port discovery advertises. */
  port(): number;
}
