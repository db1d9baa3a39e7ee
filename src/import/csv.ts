/**
 * An incremental RFC 4180 reader for `rollcall import`: text goes in chunk by chunk (a file is
 * never held whole), records come out with the line each starts on. It accepts what RFC 4180
 * section 2 allows and the common relaxations of it: CRLF, LF or a lone CR between records, a
 * UTF-8 byte order mark before the header, quoted fields holding commas, doubled quotes and line
 * breaks, blank lines (skipped). A record that breaks the grammar (a quote inside an unquoted
 * field, text after a closing quote, a quoted field never closed) still comes out, with the
 * problem named, so the import refuses that row and goes on. Knows nothing of SCIM.
 */

export interface CsvRecord {
  /** The 1-based line of the file the record starts on (the header is line 1). */
  readonly line: number;
  readonly fields: readonly string[];
  /** What breaks RFC 4180 in this record; absent when it parsed cleanly. */
  readonly problem?: string;
}

/** The longest record read (characters): past it the file is refused, as a quote left open would swallow the rest. */
export const MAX_RECORD_CHARS = 1024 * 1024;

/**
 * A file the reader cannot go on with (a record longer than MAX_RECORD_CHARS). `line` is the
 * first line whose record was not handed out: the records before it came out of earlier calls.
 */
export class CsvFileError extends Error {
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}

type State = 'fieldStart' | 'unquoted' | 'quoted' | 'quoteInQuoted';

export class CsvReader {
  #state: State = 'fieldStart';
  #fields: string[] = [];
  #field = '';
  #line = 1;
  #recordLine = 1;
  #recordChars = 0;
  #inRecord = false;
  #problem: string | undefined;
  /** The previous chunk ended on a CR that ended a record: a LF opening this one belongs to it. */
  #afterCr = false;
  #first = true;

  /** Reads `text`, the next piece of the file; returns the records it completed. */
  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    let i = 0;
    if (this.#first && text.length > 0) {
      this.#first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    if (this.#afterCr && i < text.length) {
      this.#afterCr = false;
      if (text[i] === '\n') i++;
    }
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (!this.#inRecord) {
        this.#inRecord = true;
        this.#recordLine = this.#line;
        this.#recordChars = 0;
      }
      if (++this.#recordChars > MAX_RECORD_CHARS) {
        // Records this call completed are lost with the throw: the first of them is the first line not handed out.
        throw new CsvFileError(`the record on line ${this.#recordLine} is longer than ${MAX_RECORD_CHARS} characters (a quoted field never closed?)`, out[0]?.line ?? this.#recordLine);
      }
      switch (this.#state) {
        case 'quoted':
          if (c === '"') this.#state = 'quoteInQuoted';
          else {
            if (c === '\n') this.#line++;
            this.#field += c;
          }
          continue;
        case 'quoteInQuoted':
          if (c === '"') {
            this.#field += '"';
            this.#state = 'quoted';
            continue;
          }
          if (c !== ',' && c !== '\n' && c !== '\r') {
            this.#flag(`text after the closing quote of field ${this.#fields.length + 1}`);
            this.#field += c;
            this.#state = 'unquoted';
            continue;
          }
          break;
        case 'fieldStart':
          if (c === '"') {
            this.#state = 'quoted';
            continue;
          }
          break;
        case 'unquoted':
          break;
      }
      // Outside quotes: a separator, a record's end, or a character of an unquoted field.
      if (c === ',') {
        this.#fields.push(this.#field);
        this.#field = '';
        this.#state = 'fieldStart';
      } else if (c === '\n' || c === '\r') {
        this.#line++;
        const record = this.#finish();
        if (record) out.push(record);
        if (c === '\r') {
          if (i + 1 < text.length) {
            if (text[i + 1] === '\n') i++;
          } else this.#afterCr = true;
        }
      } else {
        if (c === '"') this.#flag(`a quote inside unquoted field ${this.#fields.length + 1} (quote the field and double the quote)`);
        this.#field += c;
        this.#state = 'unquoted';
      }
    }
    return out;
  }

  /** The end of the file: the last record, if the file does not end with a line break. */
  end(): CsvRecord[] {
    if (!this.#inRecord) return [];
    if (this.#state === 'quoted') this.#flag(`the quoted field ${this.#fields.length + 1} is never closed`);
    const record = this.#finish();
    return record ? [record] : [];
  }

  #flag(problem: string): void {
    this.#problem ??= problem;
  }

  #finish(): CsvRecord | undefined {
    const blank = this.#fields.length === 0 && this.#field === '' && this.#state === 'fieldStart';
    this.#fields.push(this.#field);
    const record: CsvRecord = { line: this.#recordLine, fields: this.#fields, ...(this.#problem !== undefined ? { problem: this.#problem } : {}) };
    this.#fields = [];
    this.#field = '';
    this.#state = 'fieldStart';
    this.#problem = undefined;
    this.#inRecord = false;
    return blank ? undefined : record;
  }
}

/** The records of a whole text (tests, small inputs). */
export function parseCsv(text: string): CsvRecord[] {
  const reader = new CsvReader();
  return [...reader.push(text), ...reader.end()];
}
