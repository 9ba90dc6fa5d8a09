import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateServingCertificate } from '../../../src/testing/tls/tls.js';

type AnyObject = Record<string, any>;

/** What a spec's webhook does with one review: answer it (a JSON body, or a raw status and text), or never answer. */
export type Answer = AnyObject | { readonly raw: string; readonly status?: number } | 'hang';

/** A real node:https webhook server on 127.0.0.1 with its own CA, recording the reviews it was sent. */
export interface WebhookServer {
  /** `https://127.0.0.1:PORT` */
  readonly url: string;
  /** The CA bundle, base64, as a configuration's `clientConfig.caBundle` carries it. */
  readonly caBundle: string;
  /** Every request received: its path (with the query) and body. */
  readonly received: { path: string; body: AnyObject }[];
  close(): Promise<void>;
}

/** Starts a webhook server; `answer` is given the path and the review. */
export async function startWebhookServer(answer: (path: string, review: AnyObject) => Answer | Promise<Answer>): Promise<WebhookServer> {
  const cert = await generateServingCertificate();
  const received: { path: string; body: AnyObject }[] = [];
  const server: Server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AnyObject;
      received.push({ path: req.url ?? '', body });
      void Promise.resolve(answer(req.url ?? '', body)).then((a) => {
        if (a === 'hang') return;
        if (typeof a['raw'] === 'string') {
          res.writeHead(a['status'] ?? 200, { 'content-type': 'application/json' }).end(a['raw']);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(cert.caPem).toString('base64'),
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The AdmissionReview answer to `review`: allowed, with a JSON Patch when given, or denied with a status. */
export function reviewAnswer(review: AnyObject, response: AnyObject = {}): AnyObject {
  const { patch, ...rest } = response;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: {
      uid: review['request'].uid,
      allowed: true,
      ...(patch === undefined ? {} : { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }),
      ...rest,
    },
  };
}

/** One webhook entry of a configuration, pointing at `server` + `path`. */
export function webhookEntry(server: WebhookServer, name: string, path: string, extra: AnyObject = {}): AnyObject {
  return {
    name,
    clientConfig: { url: `${server.url}${path}`, caBundle: server.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}
