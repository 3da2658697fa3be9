import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources under this condition, so tests never
// depend on a prior build.
const resolve = { conditions: ['@flotilla/source'] };

export default defineConfig({
  resolve,
  test: {
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results/vitest.json' }]] : ['default'],
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          include: ['api/src/**/*.test.ts', 'hub/src/**/*.test.ts', 'agent/src/**/*.test.ts'],
          environment: 'node',
          // Projects with different worker limits run as separate groups: units first.
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // Suites share the clusters started once per run and isolate themselves by namespace.
          fileParallelism: true,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
