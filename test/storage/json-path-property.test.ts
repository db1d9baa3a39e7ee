/**
 * Issue 27 item 3: a JSON path built by the dialect hooks (dialect.ts `json`, `elements`) names
 * exactly the keys it was given, or is refused before any SQL is written. For random keys (biased
 * to the characters JSON paths and SQL literals give a meaning: `"`, `\`, `'`, `.`, `[`, `$`,
 * `*`, control characters, non-ASCII), each engine either throws the key back, or reads the value
 * stored under those keys and nothing else (the document also holds sibling keys that differ by
 * one character). The keys `"` made SQLite read as another path are always refused. One seed
 * drives a run; a failure names it, SEED replays it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { postgresHooks, sqliteHooks } from '../../src/storage/dialect.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

/** Set to a seed from a failure message to replay that run. */
const SEED: number | undefined = undefined;
const RUNS = 150;

/** Characters a path or a SQL literal gives a meaning, then ones no path accepts. */
const meaningful = fc.constantFrom("'", '.', '[', ']', '$', '*', ' ', ':', '@', '-', 'a', 'B', '0');
const refusedChar = fc.constantFrom('"', '\\', '\u0000', '\n', '\u001f', '\u007f', 'é', '\u2028', '😀');
const printable = fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 });
const key = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.oneof(meaningful, printable), { minLength: 1, maxLength: 8 }).map((cs) => cs.join('')) },
  { weight: 1, arbitrary: fc.array(fc.oneof(meaningful, refusedChar), { minLength: 0, maxLength: 6 }).map((cs) => cs.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);
const keysArb = fc.array(key, { minLength: 1, maxLength: 3 });

/** Keys one character away from `k` (a sibling a misread path might name instead). */
const neighbours = (k: string): string[] => [...new Set([`${k}x`, k.slice(0, -1), k.replace(/"/g, ''), k.replace(/\\/g, ''), `${k}"`])].filter((n) => n !== k && n !== '');

/** `{k1: {k2: value}}`, with a sibling holding a decoy beside each key. */
function documentOf(keys: readonly string[], value: unknown): Record<string, unknown> {
  let doc: unknown = value;
  for (const k of [...keys].reverse()) {
    const level: Record<string, unknown> = {};
    for (const n of neighbours(k)) level[n] = 'decoy';
    level[k] = doc;
    doc = level;
  }
  return doc as Record<string, unknown>;
}

const refused = (build: () => unknown): boolean => {
  try {
    build();
    return false;
  } catch (error) {
    assert.ok(error instanceof RangeError, `not a refusal: ${String(error)}`);
    return true;
  }
};

for (const engine of engines) {
  describe(`JSON paths name their keys or are refused on ${engine.name}`, () => {
    const hooks = engine.name === 'sqlite' ? sqliteHooks : postgresHooks;
    let database: TestDatabase;
    before(async () => {
      database = await engine.open();
    });
    after(() => database.dispose());

    /** The one-row table `d(data)` holding `doc` as each engine stores documents. */
    const source = (doc: unknown) => (engine.name === 'sqlite' ? sql`(select ${JSON.stringify(doc)} as data) as d` : sql`(select ${JSON.stringify(doc)}::jsonb as data) as d`);
    const scalar = async (expr: RawBuilder<unknown>, doc: unknown): Promise<unknown> =>
      (await sql<{ v: unknown }>`select ${expr} as v from ${source(doc)}`.execute(database.storage.db)).rows[0]?.v;

    it('a key holding " or \\ is refused by every read', () => {
      for (const k of ['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"x', 'a\\b', '"', '\\']) {
        assert.ok(refused(() => hooks.json({ column: 'data' }, [k, 'badge'], 'text')), k);
        assert.ok(refused(() => hooks.json('element', [k], 'number')), k);
        assert.ok(refused(() => hooks.elements('d', 'data', [k])), k);
      }
    });

    it('random keys: refused, or the text, the number and the array stored under them are read back', async () => {
      await fc.assert(
        fc.asyncProperty(keysArb, async (keys) => {
          const text = () => hooks.json({ column: 'data' }, keys, 'text');
          if (refused(text)) {
            assert.ok(refused(() => hooks.json({ column: 'data' }, keys, 'number')));
            assert.ok(refused(() => hooks.elements('d', 'data', keys)));
            return;
          }
          assert.ok(!keys.some((k) => k.includes('"') || k.includes('\\')), `accepted ${JSON.stringify(keys)}`);
          assert.equal(await scalar(text(), documentOf(keys, 'found')), 'found');
          assert.equal(Number(await scalar(hooks.json({ column: 'data' }, keys, 'number'), documentOf(keys, 7.5))), 7.5);
          assert.equal(await scalar(hooks.json({ column: 'data' }, keys, 'number'), documentOf(keys, '7.5')), null);
          const elements = await sql<{ v: unknown }>`select ${hooks.json('element', [], 'text')} as v from ${source(documentOf(keys, ['x', 'y']))}, ${hooks.elements('d', 'data', keys)} order by ${hooks.elementIndex()}`.execute(database.storage.db);
          assert.deepEqual(elements.rows.map((r) => r.v), ['x', 'y']);
        }),
        { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
    });
  });
}
