import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// libs/kernel is the pure domain (tag type:domain): its shipped modules import
// zod, @writ/contracts and each other only, and never read a clock or randomness.
const SRC = new URL('./', import.meta.url);
const shipped = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.includes('__fixtures__'))
  .sort();

function importsOf(source: string): string[] {
  const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((match) => match[1] as string);
  const dynamic = [...source.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]/g)].map((match) => match[1] as string);
  return [...specifiers, ...dynamic];
}

describe('libs/kernel purity', () => {
  it('given the shipped modules, then there are some to check', () => {
    expect(shipped).toContain('index.ts');
    expect(shipped.length).toBeGreaterThan(15);
  });

  it.each(shipped)('given %s, then it imports only zod, @writ/contracts and relative .js modules', (file) => {
    const source = readFileSync(new URL(file, SRC), 'utf8');
    for (const specifier of importsOf(source)) {
      expect(specifier === 'zod' || specifier === '@writ/contracts' || /^\.\.?\/[a-z0-9./-]+\.js$/.test(specifier), `${file} imports ${specifier}`).toBe(true);
    }
  });

  it.each(shipped)('given %s, then it never reads the clock or randomness', (file) => {
    const source = readFileSync(new URL(file, SRC), 'utf8');
    expect(source).not.toMatch(/\bDate\.now\s*\(|\bnew Date\s*\(\s*\)|\bMath\.random\s*\(|\bperformance\.now\s*\(|\bcrypto\.random/);
  });
});
