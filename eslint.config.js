// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.cache/**', 'deploy/**', 'migrations/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.ts', 'hub/*.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read the environment once in a config module and inject it (docs/adr/0001).',
        },
      ],
    },
  },
  {
    // Entry points and configuration loaders are where the environment is read.
    files: [
      '**/config.ts',
      '**/main.ts',
      '**/cli.ts',
      'test/env/src/**',
      'test/integration/**',
      'test/demo/**',
      'test/bench/**',
      '*.config.ts',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  // Package boundaries (docs/adr/0001): `api` imports nothing of ours; `hub`, `agent` and `cli` only `api`.
  // tsc -b alone cannot hold this line: npm hoists every workspace into node_modules/@flotilla,
  // so `import '@flotilla/hub'` resolves from the agent as soon as the hub has been built.
  ...[
    { pkg: 'api', forbidden: ['hub', 'agent', 'cli', 'test'] },
    { pkg: 'hub', forbidden: ['agent', 'cli', 'test'] },
    { pkg: 'agent', forbidden: ['hub', 'cli', 'test'] },
    { pkg: 'cli', forbidden: ['hub', 'agent', 'test'] },
  ].map(({ pkg, forbidden }) => ({
    files: [`${pkg}/**/*.{ts,js}`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: forbidden.flatMap((p) => [`@flotilla/${p}`, `@flotilla/${p}/*`]),
              message: `${pkg}/ may import only ${pkg === 'api' ? 'its own modules' : '@flotilla/api'} (docs/adr/0001).`,
            },
            {
              regex: `^(\\.\\./)+(${forbidden.join('|')})/`,
              message: `${pkg}/ may not reach into another package's files (docs/adr/0001).`,
            },
          ],
        },
      ],
    },
  })),
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
