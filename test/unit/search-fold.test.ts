/**
 * The console search's fold (src/text.ts searchFold): case and accents ignored ("jose" finds
 * José, "muller" Müller, "ANGSTROM" Ångström), the letters Unicode does not decompose spelled
 * out (ß, æ, œ, ø, ł, ...), marks of other scripts kept; idempotent, and toLowerCase on ASCII
 * (migration 032's backfill folds ASCII rows with the engines' lower()).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { searchFold } from '../../src/text.ts';

/** Text rich in what the fold touches: accented and special letters, their capitals, marks alone, other scripts. */
const tricky = fc
  .array(
    fc.oneof(
      fc.constantFrom('a', 'Z', 'é', 'É', 'e\u0301', 'ü', 'Ü', 'Å', 'ß', 'ẞ', 'Æ', 'œ', 'Ø', 'Ł', 'ı', 'İ', 'Σ', 'ς', 'ά', 'Ё', 'й', '\u0301', '\u0308', 'कि', '한', 'ǅ', 'ﬁ', '𝔘', ' '),
      fc.string({ unit: 'grapheme', maxLength: 2 }),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(''));

describe('searchFold', () => {
  it('ignores case and accents', () => {
    assert.equal(searchFold('José'), 'jose');
    assert.equal(searchFold('JOSÉ'), 'jose');
    assert.equal(searchFold('Jose\u0301'), 'jose', 'a decomposed accent too');
    assert.equal(searchFold('Müller'), 'muller');
    assert.equal(searchFold('Ångström'), 'angstrom');
    assert.equal(searchFold('ANGSTROM'), 'angstrom');
    assert.equal(searchFold('François Œuvre'), 'francois oeuvre');
    assert.equal(searchFold('Ёлка'), 'елка');
    assert.equal(searchFold('Ἀθῆναι'), 'αθηναι');
  });

  it('spells out letters without a decomposition (ß, æ, ø, ł, þ) and reads a final sigma as σ', () => {
    assert.equal(searchFold('Straße'), 'strasse');
    assert.equal(searchFold('STRAẞE'), 'strasse');
    assert.equal(searchFold('Ærø'), 'aero');
    assert.equal(searchFold('Łódź'), 'lodz');
    assert.equal(searchFold('Þór'), 'thor');
    assert.equal(searchFold('İstanbul'), 'istanbul');
    assert.equal(searchFold('ΟΔΟΣ'), 'οδοσ');
    assert.ok(searchFold('ΟΔΟΣΤ').startsWith(searchFold('ΟΔΟΣ')), 'a word folds to a prefix of a longer one');
  });

  it('keeps the marks of scripts where they spell the word (Devanagari), and composes the result (NFC)', () => {
    assert.equal(searchFold('किताब'), 'किताब');
    assert.equal(searchFold('한국'), '한국');
  });

  it('is idempotent, lower-case and composed (NFC): folding twice is folding once', () => {
    fc.assert(
      fc.property(tricky, (s) => {
        const once = searchFold(s);
        assert.equal(searchFold(once), once);
        assert.equal(once, once.normalize('NFC'));
        assert.equal(once, once.toLowerCase());
      }),
      { numRuns: 2000 },
    );
  });

  it('ignores case and accents alike: a text and its upper-cased, NFD or NFC forms fold the same', () => {
    fc.assert(
      fc.property(tricky, (s) => {
        assert.equal(searchFold(s.normalize('NFD')), searchFold(s.normalize('NFC')));
        assert.equal(searchFold(s.toUpperCase()), searchFold(s.toUpperCase().toLowerCase()));
      }),
      { numRuns: 2000 },
    );
  });

  it('is toLowerCase on ASCII text (what migration 032 backfills with lower())', () => {
    fc.assert(fc.property(fc.string({ unit: fc.integer({ min: 1, max: 0x7f }).map((c) => String.fromCharCode(c)) }), (s) => assert.equal(searchFold(s), s.toLowerCase())), { numRuns: 2000 });
  });

  it('a prefix of a text folds to a prefix of its fold when the cut falls between letters', () => {
    fc.assert(
      fc.property(tricky, tricky, (a, b) => {
        const whole = (a + ' ' + b).normalize('NFC');
        const head = (a + ' ').normalize('NFC');
        if (!whole.startsWith(head)) return;
        assert.ok(searchFold(whole).startsWith(searchFold(head)), `${JSON.stringify(head)} / ${JSON.stringify(whole)}`);
      }),
      { numRuns: 2000 },
    );
  });
});
