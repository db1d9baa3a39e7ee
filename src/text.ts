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
