import { canonicalJson } from '@writ/crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bundleKeys, buildFixture } from '../../test/bundle.fixture.js';
import { bundleHashOf, serializeBundle } from './bundle-seal.js';
import { verifyBundleText } from './verify-bundle.js';

/**
 * Tamper detection (DESIGN invariant 8): random mutations of a real-shaped
 * bundle — values changed, fields dropped or added, array elements dropped,
 * duplicated, inserted or reordered, in the stored events, the receipts and
 * everything else — are each caught by `writ verify`.
 *
 * Counting: a mutation that leaves the bundle's canonical form unchanged
 * (swapping two equal elements, re-setting a value to itself) is a no-op, not
 * a tampering; it is discarded (fc.pre) and the run continues until 1,000
 * real mutations were checked. Byte-level mutations of the file need no such
 * rule: the verifier requires the file to be exactly the RFC 8785 form of its
 * content, so every changed byte is either not JSON, not canonical, or a
 * different bundle.
 */

const keys = await bundleKeys();
const { bundle } = await buildFixture(keys);
const original = serializeBundle(bundle);
const RUNS = 1_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Container = Json[] | { [key: string]: Json };

/** Where to aim: mostly the stored events and the receipts, but every part of the bundle is fair game. */
const REGIONS = ['events', 'events', 'events', 'receipts', 'receipts', 'receipts', 'principals', 'tree_head', 'keys', 'not_asserted', ''] as const;

interface Slot {
  readonly parent: Container;
  readonly key: string | number;
}

/** Every (parent, key) slot under `root`, in a fixed order. */
function slots(root: Json): Slot[] {
  const found: Slot[] = [];
  const walk = (node: Json): void => {
    if (Array.isArray(node)) {
      node.forEach((child, index) => {
        found.push({ parent: node, key: index });
        walk(child);
      });
    } else if (typeof node === 'object' && node !== null) {
      for (const key of Object.keys(node).sort()) {
        found.push({ parent: node, key });
        walk(node[key] as Json);
      }
    }
  };
  walk(root);
  return found;
}

function containers(root: Json): Container[] {
  const found: Container[] = [];
  const walk = (node: Json): void => {
    if (typeof node !== 'object' || node === null) return;
    found.push(node);
    for (const child of Array.isArray(node) ? node : Object.values(node)) walk(child);
  };
  walk(root);
  return found;
}

const get = (slot: Slot): Json => (Array.isArray(slot.parent) ? slot.parent[slot.key as number] : (slot.parent as Record<string, Json>)[slot.key]) as Json;
const set = (slot: Slot, value: Json): void => {
  if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = value;
  else (slot.parent as Record<string, Json>)[slot.key] = value;
};

/** A different value of the same kind where there is one: one character of a string, a number moved, a boolean flipped. */
function changed(value: Json, seed: number): Json {
  if (typeof value === 'string') {
    if (value.length === 0) return 'x';
    const at = seed % value.length;
    const alphabet = '0123456789abcdefABCDEF-_:.xyz';
    let replacement = alphabet[seed % alphabet.length] as string;
    if (replacement === value[at]) replacement = alphabet[(seed + 1) % alphabet.length] as string;
    return value.slice(0, at) + replacement + value.slice(at + 1);
  }
  if (typeof value === 'number') return [value + 1, value - 1, value * 2, value / 2 + 0.5][seed % 4] as number;
  if (typeof value === 'boolean') return !value;
  if (value === null) return ['', 0, false, {}][seed % 4] as Json;
  return Array.isArray(value) ? [] : null;
}

type Mutation = { readonly region: number; readonly op: 'change' | 'delete' | 'add_field' | 'insert' | 'drop' | 'duplicate' | 'reorder'; readonly pick: number; readonly seed: number };

const mutation = fc.record({
  region: fc.nat(REGIONS.length - 1),
  op: fc.constantFrom('change', 'change', 'delete', 'add_field', 'insert', 'drop', 'duplicate', 'reorder'),
  pick: fc.nat(),
  seed: fc.nat(),
}) as fc.Arbitrary<Mutation>;

/** Applies one mutation to a copy of the bundle; undefined when the chosen spot has nothing to mutate that way. */
function mutate(source: Json, m: Mutation): Json | undefined {
  const copy = JSON.parse(JSON.stringify(source)) as Record<string, Json>;
  const region = REGIONS[m.region] as string;
  const root: Json = region === '' ? copy : (copy[region] as Json);
  const all = slots(root);
  const arrays = containers(root).filter((node): node is Json[] => Array.isArray(node));
  const objects = containers(root).filter((node): node is { [key: string]: Json } => !Array.isArray(node));
  switch (m.op) {
    case 'change': {
      const slot = all[m.pick % Math.max(1, all.length)];
      if (slot === undefined) return undefined;
      set(slot, changed(get(slot), m.seed));
      break;
    }
    case 'delete': {
      const members = all.filter((slot) => !Array.isArray(slot.parent));
      const slot = members[m.pick % Math.max(1, members.length)];
      if (slot === undefined) return undefined;
      delete (slot.parent as Record<string, Json>)[slot.key];
      break;
    }
    case 'add_field': {
      const target = objects[m.pick % Math.max(1, objects.length)];
      if (target === undefined) return undefined;
      target[`x_${m.seed % 97}`] = m.seed % 2 === 0 ? 'inserted' : m.seed;
      break;
    }
    case 'insert': {
      const target = arrays[m.pick % Math.max(1, arrays.length)];
      if (target === undefined) return undefined;
      target.splice(m.seed % (target.length + 1), 0, target.length === 0 ? 'inserted' : (JSON.parse(JSON.stringify(target[m.seed % target.length])) as Json));
      break;
    }
    case 'drop': {
      const target = arrays.filter((array) => array.length > 0)[m.pick % Math.max(1, arrays.length)];
      if (target === undefined) return undefined;
      target.splice(m.seed % target.length, 1);
      break;
    }
    case 'duplicate': {
      const target = arrays.filter((array) => array.length > 0)[m.pick % Math.max(1, arrays.length)];
      if (target === undefined) return undefined;
      const at = m.seed % target.length;
      target.splice(at + 1, 0, JSON.parse(JSON.stringify(target[at])) as Json);
      break;
    }
    case 'reorder': {
      const target = arrays.filter((array) => array.length > 1)[m.pick % Math.max(1, arrays.length)];
      if (target === undefined) return undefined;
      const a = m.seed % target.length;
      const b = (a + 1 + (Math.floor(m.seed / target.length) % (target.length - 1))) % target.length;
      [target[a], target[b]] = [target[b] as Json, target[a] as Json];
      break;
    }
  }
  return copy;
}

function canonicalOrUndefined(value: Json): string | undefined {
  try {
    return canonicalJson(value);
  } catch {
    return undefined;
  }
}

describe('tamper detection', () => {
  it(`given ${RUNS} random mutations of a bundle re-sealed by whoever changed it, when verified, then each is caught by a check other than the seal`, async () => {
    const stats = { checked: 0, noop: 0, byCheck: new Map<string, number>() };
    await fc.assert(
      fc.asyncProperty(mutation, async (m) => {
        // given a mutated bundle whose seal was recomputed (the seal alone proves nothing against an editor)
        const mutated = mutate(bundle as unknown as Json, m);
        fc.pre(mutated !== undefined);
        const record = mutated as Record<string, Json>;
        if (typeof record['bundle_hash'] === 'string' && canonicalOrUndefined(record) !== undefined) record['bundle_hash'] = bundleHashOf(record);
        const text = canonicalOrUndefined(record);
        // (a change of bundle_hash alone is undone by the re-seal: a no-op too)
        const isNoop = text === original;
        if (isNoop) stats.noop += 1;
        fc.pre(!isNoop && text !== undefined);
        // when
        const verification = await verifyBundleText(text as string);
        // then
        const failed = verification.checks.filter((entry) => entry.status === 'fail' && entry.check !== 'bundle.seal');
        expect(verification.ok).toBe(false);
        expect(failed.length).toBeGreaterThan(0);
        stats.checked += 1;
        for (const entry of failed) stats.byCheck.set(entry.check, (stats.byCheck.get(entry.check) ?? 0) + 1);
      }),
      { numRuns: RUNS, maxSkipsPerRun: 1_000 },
    );
    expect(stats.checked).toBe(RUNS);
    // Every region was reached: the events, the receipts and the rest each had mutations caught.
    expect([...stats.byCheck.keys()]).toEqual(expect.arrayContaining(['events.chain', 'receipt.event', 'bundle.schema', 'keys.history', 'tree_head.signature', 'receipt.inclusion']));
  }, 240_000);

  it('given 1,000 random byte flips, insertions and deletions in the bundle file, when verified, then each is caught', async () => {
    const bytes = Buffer.from(original, 'utf8');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('flip', 'insert', 'delete'), fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), async (op, at, byte) => {
        // given the file with one byte changed
        let changedBytes: Buffer;
        if (op === 'flip') {
          changedBytes = Buffer.from(bytes);
          changedBytes[at] = (changedBytes[at] as number) ^ byte;
        } else if (op === 'insert') {
          changedBytes = Buffer.concat([bytes.subarray(0, at), Buffer.of(byte), bytes.subarray(at)]);
        } else {
          changedBytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
        }
        // when
        const verification = await verifyBundleText(new Uint8Array(changedBytes));
        // then
        expect(verification.ok).toBe(false);
      }),
      { numRuns: 1_000 },
    );
  }, 240_000);
});
