import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// One config for every project: swc (not esbuild) so NestJS sees decorator metadata,
// and the `@writ/source` condition so workspace packages resolve to their TypeScript.
export default defineConfig({
  plugins: [swc.vite({ swcrc: true, configFile: new URL('./.swcrc', import.meta.url).pathname, exclude: [] })],
  resolve: { conditions: ['@writ/source'] },
  ssr: { resolve: { conditions: ['@writ/source'] } },
  test: {
    root: process.cwd(),
    include: ['**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
