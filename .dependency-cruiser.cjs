/**
 * Import cycles make initialisation order fragile (an ESM cycle can hand a module
 * `undefined` at load time) and hide layering mistakes, so CI refuses them.
 * Project-level boundaries are Nx tags (eslint.config.mjs); this checks files.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Break the cycle: move the shared piece into its own module.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.nx)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.mjs', '.json'],
      conditionNames: ['@writ/source', 'import', 'default'],
      exportsFields: ['exports'],
    },
  },
};
