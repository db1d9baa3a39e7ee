/**
 * Response bodies whose largest part is written in pieces: a JSON array whose first elements are
 * in hand and whose other elements are read chunk by chunk while the body is being sent (a
 * Group's `members`, which may number 100,000). The bytes are exactly JSON.stringify's of the
 * same body with the array complete: same fields, same order, no whitespace. A body without
 * such an array is one buffer. It knows nothing of HTTP or SQL.
 *
 * Between two chunks it lets the event loop turn: reading, shaping and serializing a whole big
 * array back to back (SQLite answers synchronously) would hold every other request as long, so
 * the longest hold is one chunk's work. A list page's Resources are cut by size, not by count:
 * elements in hand (ItemArray) are serialized one at a time and elements serialized before
 * (SerializedArray) are sent as they are, the event loop turning each time TURN_CHARS
 * characters of text are out, so a page of a few very large resources is sent in as many turns
 * as a page of many small ones of the same size. A SerializedArray that small is spliced into
 * the body's one buffer. Arrays may nest: a list page's Resources streamed, each group in it
 * streaming its members.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Characters of JSON text (about as many bytes) a body's arrays produce between two turns of the event loop. */
export const TURN_CHARS = 64 * 1024;

/** What no JSON text of ordinary data contains unless a string holds a NUL and these letters. */
const MARKER_PREFIX = '\u0000rollcall-streamed-array:';
const QUOTED_PREFIX = JSON.stringify(MARKER_PREFIX).slice(0, -1);

/**
 * A JSON array sent in pieces: `head` is already read (so that a failure to read at all is an
 * ordinary error answer, raised before any byte is sent), `tail` yields the remaining elements
 * chunk by chunk, each chunk already shaped for the response.
 */
export class StreamedArray {
  readonly head: readonly unknown[];
  readonly tail: () => AsyncIterable<readonly unknown[]>;
  /** Stands for the array in the JSON text until the pieces replace it; random per array. */
  readonly marker: string;

  constructor(head: readonly unknown[], tail: () => AsyncIterable<readonly unknown[]>) {
    this.head = head;
    this.tail = tail;
    this.marker = `${MARKER_PREFIX}${randomUUID()}`;
  }

  toJSON(): string {
    return this.marker;
  }

}

/**
 * A JSON array whose elements are in hand (a list page's Resources): serialized one at a time as
 * the body is sent, the event loop turning every TURN_CHARS characters of text.
 */
export class ItemArray {
  readonly items: readonly unknown[];
  readonly marker: string;

  constructor(items: readonly unknown[]) {
    this.items = items;
    this.marker = `${MARKER_PREFIX}${randomUUID()}`;
  }

  toJSON(): string {
    return this.marker;
  }
}

/**
 * A JSON array whose elements are already serialized (a list page's resources, serialized once
 * to weigh them against the page's byte budget), so they are not serialized twice: spliced into
 * the body's text when the texts are short (TURN_CHARS in all), sent as they are with the event
 * loop turning between pieces otherwise. Only for texts that hold no StreamedArray (see
 * holdsStreamedArray).
 */
export class SerializedArray {
  readonly texts: readonly string[];
  readonly marker: string;

  constructor(texts: readonly string[]) {
    this.texts = texts;
    this.marker = `${MARKER_PREFIX}${randomUUID()}`;
  }

  toJSON(): string {
    return this.marker;
  }
}

/** Whether a serialized value still holds StreamedArrays to expand (its text is not final). */
export const holdsStreamedArray = (text: string): boolean => text.includes(QUOTED_PREFIX);

export type JsonBody = { readonly bytes: Buffer } | { readonly pieces: AsyncIterable<Buffer> };

/** An array whose text is produced as the body is sent. */
type Streamed = StreamedArray | ItemArray | SerializedArray;

/** Every StreamedArray and ItemArray (and SerializedArray, when asked) in `value`, by quoted marker. */
function collect(value: unknown, found: Map<string, Streamed>, serialized?: Map<string, SerializedArray>): void {
  if (value instanceof StreamedArray || value instanceof ItemArray) {
    found.set(JSON.stringify(value.marker), value);
  } else if (value instanceof SerializedArray) {
    serialized?.set(JSON.stringify(value.marker), value);
  } else if (Array.isArray(value)) {
    for (const v of value) collect(v, found, serialized);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) collect(v, found, serialized);
  }
}

/** The elements of `array` as JSON text, without the brackets, preceded by a comma unless first. */
function elements(array: readonly unknown[], first: boolean): string {
  if (array.length === 0) return '';
  const text = JSON.stringify(array).slice(1, -1);
  return first ? text : `,${text}`;
}

/** The JSON text of `value` as pieces, its StreamedArrays (if any) expanded in place. */
async function* expanded(text: string, value: unknown): AsyncGenerator<Buffer> {
  if (!text.includes(QUOTED_PREFIX)) {
    yield Buffer.from(text);
    return;
  }
  const arrays = new Map<string, Streamed>();
  collect(value, arrays);
  if (arrays.size === 0) yield Buffer.from(text);
  else yield* textPieces(text, arrays);
}

/**
 * The array of `count` elements whose texts `textOf` gives (serializing them, or not), in pieces
 * of at least TURN_CHARS characters (an element is never cut), the event loop turning after each;
 * an element holding streamed arrays is expanded in place.
 */
async function* elementPieces(count: number, textOf: (i: number) => { text: string; value: unknown }): AsyncGenerator<Buffer> {
  let pending = '[';
  for (let i = 0; i < count; i++) {
    const { text, value } = textOf(i);
    if (i > 0) pending += ',';
    if (text.includes(QUOTED_PREFIX)) {
      yield Buffer.from(pending);
      pending = '';
      yield* expanded(text, value);
    } else {
      pending += text;
    }
    if (pending.length >= TURN_CHARS) {
      yield Buffer.from(pending);
      pending = '';
      // Other requests get their turn before the next element is serialized and sent.
      await nextTurn();
    }
  }
  yield Buffer.from(`${pending}]`);
}

/** The pieces of any array sent while the body is written. */
function piecesOf(array: Streamed): AsyncGenerator<Buffer> {
  if (array instanceof StreamedArray) return arrayPieces(array);
  if (array instanceof ItemArray) return elementPieces(array.items.length, (i) => ({ text: JSON.stringify(array.items[i]), value: array.items[i] }));
  return elementPieces(array.texts.length, (i) => ({ text: array.texts[i]!, value: undefined }));
}

async function* arrayPieces(array: StreamedArray): AsyncGenerator<Buffer> {
  let first = array.head.length === 0;
  yield Buffer.from('[');
  if (!first) yield* expanded(elements(array.head, true), array.head);
  const chunks = array.tail()[Symbol.asyncIterator]();
  for (;;) {
    // Other requests get their turn before each chunk is read and serialized.
    await nextTurn();
    const next = await chunks.next();
    if (next.done) break;
    if (next.value.length === 0) continue;
    yield* expanded(elements(next.value, first), next.value);
    first = false;
  }
  yield Buffer.from(']');
}

async function* textPieces(text: string, arrays: Map<string, Streamed>): AsyncGenerator<Buffer> {
  let from = 0;
  for (;;) {
    let at = text.indexOf(QUOTED_PREFIX, from);
    let array: Streamed | undefined;
    while (at >= 0) {
      const end = text.indexOf('"', at + QUOTED_PREFIX.length);
      array = arrays.get(text.slice(at, end + 1));
      if (array) break;
      // A string in the data that merely looks like a marker: it stays as it is.
      at = text.indexOf(QUOTED_PREFIX, at + 1);
    }
    if (at < 0 || !array) {
      yield Buffer.from(text.slice(from));
      return;
    }
    yield Buffer.from(text.slice(from, at));
    yield* piecesOf(array);
    from = text.indexOf('"', at + QUOTED_PREFIX.length) + 1;
  }
}

/** A body as bytes, or as pieces when it holds arrays still to be read. */
export function jsonBody(body: unknown): JsonBody {
  let text = JSON.stringify(body);
  if (!text.includes(QUOTED_PREFIX)) return { bytes: Buffer.from(text) };
  const arrays = new Map<string, Streamed>();
  const serialized = new Map<string, SerializedArray>();
  collect(body, arrays, serialized);
  // Each marker stands once in the body's own text, before anything is spliced in.
  for (const [quoted, array] of serialized) {
    if (array.texts.reduce((n, t) => n + t.length, 0) <= TURN_CHARS) text = text.replace(quoted, () => `[${array.texts.join(',')}]`);
    else arrays.set(quoted, array);
  }
  if (arrays.size === 0) return { bytes: Buffer.from(text) };
  return { pieces: textPieces(text, arrays) };
}
