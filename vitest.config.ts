import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples import the package by name; tests run them against the sources.
    alias: [
      { find: /^rxkube\/testing$/, replacement: src('testing/index.ts') },
      { find: /^rxkube\/metrics$/, replacement: src('metrics/index.ts') },
      { find: /^rxkube\/zod$/, replacement: src('crd/zod.ts') },
      { find: /^rxkube\/valibot$/, replacement: src('crd/valibot.ts') },
      { find: /^rxkube\/core$/, replacement: src('core.ts') },
      { find: /^rxkube$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['spec/**/*.spec.ts'],
    exclude: ['spec/e2e/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['./spec/helpers/buildDist.ts'],
    reporters: ['default', './spec/helpers/summaryReporter.ts'],
  },
});
