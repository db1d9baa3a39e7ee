/**
 * Text Rollcall can store: well-formed Unicode (no unpaired surrogate) without NUL. PostgreSQL
 * refuses both in text and jsonb, and SQLite would store what the other engine cannot, so every
 * protocol plugin turns such input away at its boundary with its own 400, before any service or
 * query sees it.
 */

export const isStorableText = (text: string): boolean => text.isWellFormed() && !text.includes('\u0000');

/**
 * The first string inside `value` (keys included) that is not storable, or undefined. Iterative:
 * a body nested thousands of levels deep must not overflow the stack.
 */
export function unstorableText(value: unknown): string | undefined {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (!isStorableText(next)) return next;
    } else if (Array.isArray(next)) {
      pending.push(...next);
    } else if (next !== null && typeof next === 'object') {
      for (const [key, item] of Object.entries(next)) {
        if (!isStorableText(key)) return key;
        pending.push(item);
      }
    }
  }
  return undefined;
}

/** Compares by Unicode code point, as SQLite's binary collation and PostgreSQL's "C" do on UTF-8. */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * Letters a search folds that Unicode does not decompose into a base letter and a mark: each is a
 * letter of its own, written with its usual ASCII spelling so that either spelling finds it
 * ("strasse" finds Straße, "oe" finds Œuvre, "o" finds Ørsted, "lodz" finds Łódź); and Greek final
 * sigma, which toLowerCase writes only at a word's end, as σ so that a prefix finds a longer word.
 */
const SEARCH_LETTERS: Readonly<Record<string, string>> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ħ: 'h', ı: 'i', ŀ: 'l', ς: 'σ',
};
const SEARCH_LETTER = new RegExp(`[${Object.keys(SEARCH_LETTERS).join('')}]`, 'gu');

/**
 * The marks canonical decomposition (NFD) separates from a Latin, Greek or Cyrillic letter: its
 * accents (é, ü, å, ç, ő, ё, ά). Marks after letters of other scripts stay: there they are
 * part of the spelling (a Devanagari vowel sign), not an accent a person may leave out.
 */
const ACCENTS = /(?<=[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]\p{M}*)\p{M}+/gu;

/**
 * Text as the console's search box compares it, ignoring case and accents: lower-cased as
 * toLowerCase does, decomposed (NFD), the accents of Latin, Greek and Cyrillic letters removed,
 * SEARCH_LETTERS spelled out, then composed again (NFC). "José", "JOSE" and "jose" all fold to
 * "jose"; "Ångström" to "angstrom"; "Müller" to "muller" (not "mueller": the German
 * transliteration is one language's rule, and "muller" is what a person who cannot type ü types).
 * Idempotent, and on ASCII text it is toLowerCase (migration 032 relies on both). Only the
 * console's search uses it (the accent-folded columns of migration 032): SCIM filters keep
 * RFC 7644's comparisons, case-insensitive but accent-sensitive.
 */
export function searchFold(text: string): string {
  return text.toLowerCase().normalize('NFD').replace(ACCENTS, '').replace(SEARCH_LETTER, (c) => SEARCH_LETTERS[c]!).normalize('NFC');
}
