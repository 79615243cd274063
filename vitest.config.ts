import path from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const workspaceRoot = path.dirname(new URL(import.meta.url).pathname);
// Each project's results as JSON, so `npm test` can name the failed tests at the end of
// its output (CI keeps only the tail of a long log).
const reportName = path.relative(workspaceRoot, process.cwd()).replaceAll(path.sep, '__') || 'root';

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
    reporters: ['default', 'json'],
    outputFile: { json: path.join(workspaceRoot, 'var', 'test-reports', `${reportName}.json`) },
  },
});
