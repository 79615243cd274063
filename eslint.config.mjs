import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Module boundaries are the architecture: the pure domain imports nothing impure,
// libraries never import services, services never import each other.
const impureModules = [
  '@nestjs/*',
  'nats',
  '@nats-io/*',
  'pg',
  'typeorm',
  'dockerode',
  'node:fs',
  'node:fs/*',
  'fs',
  'node:child_process',
  'node:net',
  'node:http',
];

export default [
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.nx/**', '**/__fixtures__/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            {
              sourceTag: 'type:domain',
              onlyDependOnLibsWithTags: ['type:domain', 'type:contracts'],
              bannedExternalImports: impureModules,
            },
            {
              sourceTag: 'type:contracts',
              onlyDependOnLibsWithTags: ['type:contracts'],
              bannedExternalImports: impureModules,
            },
            {
              sourceTag: 'type:util',
              onlyDependOnLibsWithTags: ['type:util', 'type:contracts'],
              bannedExternalImports: ['@nestjs/*', '@nats-io/*', 'pg', 'typeorm', 'dockerode'],
            },
            {
              sourceTag: 'type:infra',
              onlyDependOnLibsWithTags: ['type:infra', 'type:util', 'type:contracts', 'type:domain'],
            },
            {
              sourceTag: 'type:testing',
              onlyDependOnLibsWithTags: ['type:testing', 'type:infra', 'type:util', 'type:contracts', 'type:domain'],
            },
            {
              sourceTag: 'type:service',
              onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:infra', 'type:testing'],
            },
          ],
        },
      ],
    },
  },
  {
    // Deterministic code takes time and randomness from its caller (command metadata).
    files: ['libs/kernel/src/**/*.ts', 'libs/contracts/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']", message: 'Pass time in through command metadata.' },
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Pass time in through command metadata.' },
        { selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']", message: 'Pass randomness in through command metadata.' },
      ],
    },
  },
];
