import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources under this condition, so tests never
// depend on a prior build.
const resolve = { conditions: ['@flotilla/source'] };
// Tests run in vite's server (ssr) environment, which takes its conditions from here.
const ssr = { resolve: { conditions: ['@flotilla/source'], externalConditions: ['@flotilla/source'] } };

export default defineConfig({
  resolve,
  ssr,
  test: {
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results/vitest.json' }]] : ['default'],
    projects: [
      {
        resolve,
        ssr,
        test: {
          name: 'unit',
          include: [
            'api/src/**/*.test.ts',
            'hub/src/**/*.test.ts',
            'agent/src/**/*.test.ts',
            'cli/src/**/*.test.ts',
            'test/bench/**/*.test.ts',
          ],
          environment: 'node',
          // Projects with different worker limits run as separate groups: units first.
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve,
        ssr,
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
