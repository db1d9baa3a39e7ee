/**
 * An incremental JSON Lines reader for `rollcall import`: one JSON value per line, LF or CRLF
 * line ends, a UTF-8 byte order mark before the first line and blank lines allowed. Text goes in
 * chunk by chunk; each line comes out with its 1-based number and either the value or the reason
 * it is not JSON, so the import refuses that line and goes on. A line longer than
 * MAX_LINE_CHARS is refused without being held whole. Knows nothing of SCIM.
 */

export interface JsonlRecord {
  readonly line: number;
  /** The parsed value, when the line is JSON. */
  readonly value?: unknown;
  /** The line as read (cut at 200 characters), when it is not. */
  readonly text?: string;
  readonly problem?: string;
}

export const MAX_LINE_CHARS = 1024 * 1024;

export class JsonlReader {
  #pending = '';
  #line = 0;
  #first = true;
  /** The current line passed MAX_LINE_CHARS: the rest of it is dropped. */
  #overlong = false;

  push(text: string): JsonlRecord[] {
    if (this.#first && text.length > 0) {
      this.#first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: JsonlRecord[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      this.#take(text.slice(start, end));
      this.#complete(out);
      start = end + 1;
    }
    this.#take(text.slice(start));
    return out;
  }

  end(): JsonlRecord[] {
    const out: JsonlRecord[] = [];
    if (this.#pending !== '' || this.#overlong) this.#complete(out);
    return out;
  }

  #take(piece: string): void {
    if (this.#overlong) return;
    this.#pending += piece;
    if (this.#pending.length > MAX_LINE_CHARS) {
      this.#overlong = true;
      this.#pending = this.#pending.slice(0, 200);
    }
  }

  #complete(out: JsonlRecord[]): void {
    this.#line++;
    const text = this.#pending.endsWith('\r') ? this.#pending.slice(0, -1) : this.#pending;
    const overlong = this.#overlong;
    this.#pending = '';
    this.#overlong = false;
    if (overlong) {
      out.push({ line: this.#line, text, problem: `the line is longer than ${MAX_LINE_CHARS} characters` });
      return;
    }
    if (text.trim() === '') return;
    try {
      out.push({ line: this.#line, value: JSON.parse(text) });
    } catch (error) {
      out.push({ line: this.#line, text: text.length > 200 ? `${text.slice(0, 200)}...` : text, problem: `not JSON: ${(error as Error).message}` });
    }
  }
}
