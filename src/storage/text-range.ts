/**
 * Text helpers that let an index answer prefix and suffix tests on both engines: the bounds of
 * a prefix range under code-point (binary UTF-8) order, text reversed by code point (a suffix
 * test is a prefix test of the reversed text), and LIKE patterns with their wildcards escaped.
 * Pure; the dialect hooks (dialect.ts) decide where each is used.
 */

/** `text` reversed by code point (never splitting a surrogate pair). */
export function reverseCodePoints(text: string): string {
  return [...text].reverse().join('');
}

const MAX_CODE_POINT = 0x10ffff;

/**
 * The least text greater, in code-point order, than every text that starts with `prefix`:
 * `prefix` with its last code point below U+10FFFF raised by one and what follows cut off
 * (U+D7FF steps over the surrogates to U+E000, which UTF-8 cannot hold). Undefined when there
 * is none (an empty prefix, or one made of U+10FFFF only): the range is then open above.
 * Every `t` with `prefix <= t < upper` starts with `prefix` or sorts between; callers keep the
 * exact test beside the range.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < MAX_CODE_POINT) {
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return String.fromCodePoint(...points, next);
    }
  }
  return undefined;
}

/** `value` with LIKE's wildcards (`%`, `_`) and the escape character (`\`) escaped by `\`. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}
