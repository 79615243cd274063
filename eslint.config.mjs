import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Module boundaries are the architecture: the pure domain imports nothing impure,
// libraries never import services, services never import each other.

/**
 * Tests of the pure projects may use test tooling (vitest, fast-check, protobufjs
 * to read .proto files); their production code depends on zod alone.
 */
function boundaries({ inTests }) {
  const pureExternals = inTests ? undefined : ['zod'];
  const pure = (tags) => ({ onlyDependOnLibsWithTags: tags, ...(pureExternals ? { allowedExternalImports: pureExternals } : {}) });
  // Only tests may reach the real-stack helpers of @writ/testing.
  const withTesting = (constraint) =>
    inTests ? { ...constraint, onlyDependOnLibsWithTags: [...new Set([...constraint.onlyDependOnLibsWithTags, 'type:testing'])] } : constraint;
  return {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: ([
      { sourceTag: 'type:domain', ...pure(['type:domain', 'type:contracts']) },
      { sourceTag: 'type:contracts', ...pure(['type:contracts']) },
      {
        sourceTag: 'type:util',
        onlyDependOnLibsWithTags: ['type:util', 'type:contracts'],
        bannedExternalImports: ['@nestjs/*', '@nats-io/*', 'pg', 'typeorm', 'dockerode'],
      },
      { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:infra', 'type:util', 'type:contracts', 'type:domain'] },
      {
        // The published agent SDK (@writ/agent): its build vendors the contracts, and nothing else
        // private may reach it, or `npm pack` would ship imports no registry resolves.
        sourceTag: 'type:sdk',
        onlyDependOnLibsWithTags: ['type:contracts'],
        bannedExternalImports: ['@nestjs/*', 'pg', 'typeorm', 'dockerode'],
      },
      {
        sourceTag: 'type:testing',
        onlyDependOnLibsWithTags: ['type:testing', 'type:infra', 'type:util', 'type:contracts', 'type:domain', 'type:sdk'],
      },
      {
        sourceTag: 'type:service',
        onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:infra'],
      },
      {
        // An app that composes services (apps/serve: every service in one process). Nothing
        // depends on it: services never import each other, and libs never import services.
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: ['type:service', 'type:domain', 'type:contracts', 'type:util', 'type:infra'],
      },
    ]).map(withTesting),
  };
}

export default [
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.nx/**', '**/__fixtures__/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@nx/enforce-module-boundaries': ['error', boundaries({ inTests: false })],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.spec.tsx', '**/test/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries({ inTests: true })] },
  },
  {
    // Nx checks npm packages but not Node built-ins; the pure projects import neither
    // I/O nor clocks, so every `node:*` module (and its bare alias) is refused here.
    files: ['libs/kernel/src/**/*.ts', 'libs/contracts/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^node:', message: 'The pure core does no I/O: take what you need as an argument.' },
            {
              regex: '^(fs|path|os|net|http|https|child_process|crypto|worker_threads|dns|tls|dgram|cluster|process|timers)(/.*)?$',
              message: 'The pure core does no I/O: take what you need as an argument.',
            },
          ],
        },
      ],
    },
  },
  {
    // The agent SDK reaches the contracts through its one seam, which its build points at the
    // vendored copy; any other import of @writ/contracts would ship unresolvable.
    files: ['libs/agent/src/**/*.ts'],
    ignores: ['libs/agent/src/contracts.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^@writ/', message: "Import contracts from './contracts.js' (the seam libs/agent/scripts/build-package.mjs vendors)." }] },
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
