/**
 * How deep a JSON request body may nest: objects and arrays at most
 * MAX_JSON_DEPTH levels, checked on the text in one pass before it is parsed, so nothing that
 * walks a body recursively (JSON.stringify, validation, PATCH, redaction) ever meets one deep
 * enough to overflow the stack. Real SCIM, admin and events bodies nest a handful of levels.
 * Each plugin turns a refusal into its own protocol's 400; this module only measures.
 */

/** Levels of objects and arrays a body may nest. */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` (JSON, well-formed or not) opens more than `max` objects or arrays at once. */
export function nestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}
