/**
 * The text helpers behind index-answered `sw` / `ew` (src/storage/text-range.ts): a prefix's
 * upper bound encloses exactly the texts that start with it (code-point order, as SQLite's
 * binary collation compares UTF-8), reversal keeps surrogate pairs whole, LIKE escaping leaves
 * no wildcard alive.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compareCodePoints } from '../../src/text.ts';
import { escapeLike, prefixUpperBound, reverseCodePoints } from '../../src/storage/text-range.ts';

/** Text from pieces that meet the edges: U+D7FF before the surrogates, outside the BMP, U+10FFFF. */
const text = fc.array(fc.constantFrom('a', 'b', 'z', '\uD7FF', '\uE000', '𝔘', '\u{10FFFF}', '%', '_', '\\'), { maxLength: 5 }).map((p) => p.join(''));

describe('prefix ranges (sw on SQLite)', () => {
  it('t starts with p exactly when p <= t < upper, for every t and p', () => {
    fc.assert(
      fc.property(text, text, (p, t) => {
        const upper = prefixUpperBound(p);
        const inRange = compareCodePoints(t, p) >= 0 && (upper === undefined || compareCodePoints(t, upper) < 0);
        assert.equal(inRange, t.startsWith(p), `p=${JSON.stringify(p)} t=${JSON.stringify(t)} upper=${JSON.stringify(upper)}`);
      }),
      { numRuns: 2000 },
    );
  });
  it('steps over the surrogates and past U+10FFFF', () => {
    assert.equal(prefixUpperBound('a\uD7FF'), 'a\uE000');
    assert.equal(prefixUpperBound('a\u{10FFFF}'), 'b');
    assert.equal(prefixUpperBound('\u{10FFFF}\u{10FFFF}'), undefined);
    assert.equal(prefixUpperBound(''), undefined);
  });
});

describe('reversed text (ew on SQLite)', () => {
  it('t ends with s exactly when reversed t starts with reversed s; pairs stay whole', () => {
    fc.assert(
      fc.property(text, text, (s, t) => {
        assert.equal(reverseCodePoints(t).startsWith(reverseCodePoints(s)), t.endsWith(s));
        assert.equal(reverseCodePoints(reverseCodePoints(t)), t);
      }),
    );
    assert.equal(reverseCodePoints('a𝔘'), '𝔘a');
  });
});

describe('LIKE patterns (PostgreSQL)', () => {
  it('escapes %, _ and the escape character', () => {
    assert.equal(escapeLike('50%_off\\'), '50\\%\\_off\\\\');
  });
});
