/** What a kubeconfig for the simulator needs. */
export interface KubeConfigParts {
  readonly url: string;
  readonly caPem: string | undefined;
  readonly token: string | undefined;
}

const NAME = 'rxkube-simulator';

/** Writes a kubeconfig YAML document with one cluster, one user and one current context. */
export function kubeConfigYaml(parts: KubeConfigParts): string {
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${NAME}`,
    '  cluster:',
    `    server: ${parts.url}`,
  ];
  if (parts.caPem !== undefined) lines.push(`    certificate-authority-data: ${Buffer.from(parts.caPem).toString('base64')}`);
  // client-node refuses plain http unless TLS verification is explicitly off; there is no TLS to verify.
  else lines.push('    insecure-skip-tls-verify: true');
  lines.push('users:', `- name: ${NAME}`, '  user:');
  if (parts.token !== undefined) lines.push(`    token: ${JSON.stringify(parts.token)}`);
  else lines[lines.length - 1] = '  user: {}';
  lines.push(
    'contexts:',
    `- name: ${NAME}`,
    '  context:',
    `    cluster: ${NAME}`,
    `    user: ${NAME}`,
    '    namespace: default',
    `current-context: ${NAME}`,
    'preferences: {}',
    '',
  );
  return lines.join('\n');
}
