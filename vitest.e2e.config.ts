import { defineConfig } from 'vitest/config';

// The integration tier: real etcd + kube-apiserver (built by spec/e2e/build.sh), one spec file at a
// time in one fork, because each file runs its own control plane on a 2-core machine.
export default defineConfig({
  test: {
    include: ['spec/e2e/**/*.e2e.spec.ts'],
    testTimeout: 180_000,
    hookTimeout: 240_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    // A test that fails against a real server is information, not flakiness: never retried.
    retry: 0,
    reporters: ['default', ['./spec/helpers/summaryReporter.ts', { label: 'e2e' }]],
  },
});
