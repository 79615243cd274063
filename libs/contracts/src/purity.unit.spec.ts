import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// libs/contracts is a pure library (tag type:contracts): its shipped modules
// import zod and each other only, and never read the clock or randomness.
// The workspace lint rule does not catch node builtins here, so this test does.
const SRC = new URL('./', import.meta.url);
const shipped = readdirSync(SRC).filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'));

function importsOf(source: string): string[] {
  const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((match) => match[1] as string);
  const dynamic = [...source.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]/g)].map((match) => match[1] as string);
  return [...specifiers, ...dynamic];
}

describe('libs/contracts purity', () => {
  it('given the shipped modules, then there are some to check', () => {
    expect(shipped).toContain('index.ts');
  });

  it.each(shipped)('given %s, then it imports only zod and sibling modules with .js extensions', (file) => {
    const source = readFileSync(new URL(file, SRC), 'utf8');
    for (const specifier of importsOf(source)) {
      expect(specifier === 'zod' || /^\.\/[a-z0-9-]+\.js$/.test(specifier), `${file} imports ${specifier}`).toBe(true);
    }
  });

  it.each(shipped)('given %s, then it never reads the clock or randomness', (file) => {
    const source = readFileSync(new URL(file, SRC), 'utf8');
    expect(source).not.toMatch(/\bDate\.now\s*\(|\bnew Date\s*\(\s*\)|\bMath\.random\s*\(|\bperformance\.now\s*\(|\bcrypto\.random/);
  });
});
