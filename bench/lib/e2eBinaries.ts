import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Points the e2e tier's cluster harness at the kube-apiserver and etcd that spec/e2e/build.sh built (the variables it
 * reads, unless already set): build.sh knows where the binaries are, and the compiled harness cannot find it from build/.
 */
export function locateBinaries(): void {
  const script = fileURLToPath(new URL('../../../spec/e2e/build.sh', import.meta.url));
  const out = execFileSync('bash', [script, '--paths'], { encoding: 'utf8' });
  const paths = Object.fromEntries(out.trim().split('\n').map((l) => l.split('=', 2) as [string, string]));
  process.env['RXKUBE_E2E_KUBE_APISERVER'] ??= paths['KUBE_APISERVER'];
  process.env['RXKUBE_E2E_ETCD'] ??= paths['ETCD'];
}
