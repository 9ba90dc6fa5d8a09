// The work both webhook servers of `npm run bench -- webhooks` do, so the figures compare the servers and not the
// handlers: a validating check and a defaulting mutation of a ConfigMap, the AdmissionReview requests that carry
// one, and the bare `node:https` server that answers them by hand.

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { createPatch } from 'rfc6902';

/** Where each webhook is served, on both servers (controller-runtime's default paths for core/v1 ConfigMaps). */
export const VALIDATE_PATH = '/validate--v1-configmap';
export const MUTATE_PATH = '/mutate--v1-configmap';

/** The label the mutating webhook defaults, and the most replicas the validating one allows. */
export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MAX_REPLICAS = 10;

/** Why `cm` is refused, or undefined when it is allowed. */
export function refusal(cm: V1ConfigMap): string | undefined {
  const replicas = Number(cm.data?.['replicas'] ?? '1');
  return Number.isInteger(replicas) && replicas <= MAX_REPLICAS ? undefined : `data.replicas: at most ${MAX_REPLICAS}`;
}

/** `cm` with its defaults: the managed-by label and one replica. */
export function withDefaults(cm: V1ConfigMap): V1ConfigMap {
  return {
    ...cm,
    metadata: { ...cm.metadata, labels: { ...cm.metadata?.labels, [MANAGED_BY]: cm.metadata?.labels?.[MANAGED_BY] ?? 'bench' } },
    data: { ...cm.data, replicas: cm.data?.['replicas'] ?? '1' },
  };
}

/** A ConfigMap of about 1 KiB, as a webhook would be sent one. */
export function sampleConfigMap(i: number, replicas = (i % 12) + 1): V1ConfigMap {
  const data: Record<string, string> = { replicas: String(replicas) };
  for (let k = 0; k < 12; k++) data[`key-${k}`] = `value-${i}-${k}-`.padEnd(64, 'x');
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'bench', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, labels: { app: 'bench' } }, data };
}

/** The body of an AdmissionReview request for the CREATE of `cm`, as kube-apiserver sends it. */
export function admissionRequestBody(i: number, cm: V1ConfigMap): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `11111111-0000-4000-8000-${String(i).padStart(12, '0')}`,
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: cm.metadata?.name,
      namespace: cm.metadata?.namespace,
      operation: 'CREATE',
      userInfo: { username: 'admin', uid: 'admin-uid', groups: ['system:masters', 'system:authenticated'] },
      object: cm,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
}

interface Review {
  readonly request?: { readonly uid?: unknown; readonly object?: unknown };
}

/** The response to one AdmissionReview body on `path`, as the bare server builds it: [status, body]. */
function answer(path: string | undefined, text: string): [number, string] {
  let review: Review;
  try {
    review = JSON.parse(text) as Review;
  } catch {
    return [400, 'not JSON'];
  }
  const request = review.request;
  if (typeof request?.uid !== 'string' || typeof request.object !== 'object' || request.object === null) return [400, 'not an AdmissionReview'];
  const cm = request.object as V1ConfigMap;
  let response: Record<string, unknown>;
  if (path === VALIDATE_PATH) {
    const why = refusal(cm);
    response = why === undefined ? { uid: request.uid, allowed: true } : { uid: request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: why } };
  } else if (path === MUTATE_PATH) {
    const patch = createPatch(cm, withDefaults(cm));
    response = patch.length === 0 ? { uid: request.uid, allowed: true } : { uid: request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
  } else {
    return [404, 'no webhook here'];
  }
  return [200, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response })];
}

/**
 * The baseline: a `node:https` server with the same certificate, answering both webhooks by hand with the same
 * validation and patch, with no limits, metrics, deadlines or certificate reloading.
 */
export function bareWebhookServer(certDir: string): Server {
  const server = createServer({ cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [status, body] = answer(req.url, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'text/plain' }).end(body);
    });
  });
  return server;
}
