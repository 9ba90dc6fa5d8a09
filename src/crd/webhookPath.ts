// A webhook path in a client config (`service.path`), as kube-apiserver's ValidateWebhookService checks it: used by
// crd()'s conversion webhook and by the admission and conversion webhooks' `path` options.

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why kube-apiserver would refuse `path` in a client config, or undefined: `/` then non-empty lower-case segments, each a DNS subdomain. */
export function pathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return "must start with '/'";
  if (path.length > 1024) return 'must be at most 1024 characters';
  if (path === '/') return undefined;
  // kube-apiserver checks each segment as a DNS subdomain (ValidateWebhookService).
  const bad = path.slice(1).split('/').find((s) => s.length > 253 || !DNS_SUBDOMAIN.test(s));
  return bad === undefined ? undefined : `segment ${JSON.stringify(bad)} must be a DNS subdomain: lower-case letters, digits and '-', dot-separated, each part starting and ending with a letter or digit`;
}
