/**
 * The readers of `rollcall import` (issue 32 item 7): the RFC 4180 CSV reader round-trips any
 * fields a small RFC 4180 writer quotes (commas, quotes, CR, LF), with a BOM or not,
 * any line ends and however the text is cut into chunks, and reports each record's first line;
 * grammar breaks are named per record without losing the records after them; a record over the
 * bound stops the reader, naming the first line it did not hand out. The JSONL reader
 * numbers lines across chunks. The progress bar redraws in place on a terminal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CsvFileError, CsvReader, MAX_RECORD_CHARS, parseCsv } from '../../src/import/csv.ts';
import type { CsvRecord } from '../../src/import/csv.ts';
import { JsonlReader } from '../../src/import/jsonl.ts';
import { progressOn } from '../../src/import/progress.ts';

/** RFC 4180 section 2: a field with a comma, quote, CR or LF is quoted, its quotes doubled; others are quoted or not at random. */
const quote = (field: string, always: boolean): string => (always || /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field);

/** The text cut at the given points (fractions of its length), read chunk by chunk. */
function readInChunks(text: string, cuts: readonly number[]): CsvRecord[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * text.length)))].sort((a, b) => a - b);
  const reader = new CsvReader();
  const out: CsvRecord[] = [];
  let at = 0;
  for (const p of [...points, text.length]) {
    out.push(...reader.push(text.slice(at, p)));
    at = p;
  }
  return [...out, ...reader.end()];
}

const fieldChars = fc.constantFrom('a', 'B', ' ', ',', '"', '\r', '\n', 'é', '1', ';');
const field = fc.string({ unit: fieldChars, maxLength: 8 });
/** Records of 1 to 4 fields; a record of one empty field would be a blank line, which the reader skips, so it gets a quoted form. */
const records = fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 });

describe('import CSV reader', () => {
  it('RFC 4180: any fields written by an RFC 4180 writer read back the same, with any line ends, BOM and chunking', () => {
    fc.assert(
      fc.property(records, fc.constantFrom('\r\n', '\n', '\r'), fc.boolean(), fc.boolean(), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), fc.boolean(), (rows, eol, bom, finalEol, cuts, alwaysQuote) => {
        const lines = rows.map((r) => r.map((f) => quote(f, alwaysQuote || (r.length === 1 && f === ''))).join(','));
        const text = `${bom ? '\uFEFF' : ''}${lines.join(eol)}${finalEol ? eol : ''}`;
        const read = readInChunks(text, cuts);
        assert.deepEqual(read.map((r) => r.fields), rows);
        assert.ok(read.every((r) => r.problem === undefined));
        // Each record starts on the line after those of the records before it (a LF inside quotes counts a line).
        let line = 1;
        for (const [i, r] of read.entries()) {
          assert.equal(r.line, line);
          line += (lines[i]!.match(/\n/g) ?? []).length + 1;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('RFC 4180 2.5-2.7: commas, doubled quotes and line breaks inside quotes; a BOM and CRLF; blank lines skipped', () => {
    const read = parseCsv('\uFEFFa,b,c\r\n"x, y","say ""hi""","two\r\nlines"\r\n\r\nlast,,\r\n');
    assert.deepEqual(read, [
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 2, fields: ['x, y', 'say "hi"', 'two\r\nlines'] },
      { line: 5, fields: ['last', '', ''] },
    ]);
  });

  it('a grammar break is named on its record and the records after it read normally', () => {
    const read = parseCsv('a,b\nx"y,1\n"q"r,2\nok,3\n"open,4\nnever closed');
    assert.deepEqual(read.map((r) => [r.line, r.fields[0], r.problem !== undefined]), [
      [1, 'a', false],
      [2, 'x"y', true],
      [3, 'qr', true],
      [4, 'ok', false],
      [5, 'open,4\nnever closed', true],
    ]);
    assert.match(read[1]!.problem!, /a quote inside unquoted field 1/);
    assert.match(read[2]!.problem!, /text after the closing quote of field 1/);
    assert.match(read[4]!.problem!, /never closed/);
  });

  it('a CR ending one chunk and the LF opening the next are one line end', () => {
    const reader = new CsvReader();
    const out = [...reader.push('a,b\r'), ...reader.push('\nc,d\r'), ...reader.push('\n'), ...reader.end()];
    assert.deepEqual(out, [{ line: 1, fields: ['a', 'b'] }, { line: 2, fields: ['c', 'd'] }]);
  });
});

describe('import CSV reader bound', () => {
  it('a record over MAX_RECORD_CHARS throws CsvFileError naming the first line not handed out, records completed in the same call included', () => {
    const long = `"${'x'.repeat(MAX_RECORD_CHARS + 1)}`;
    const separate = new CsvReader();
    assert.deepEqual(separate.push('h\na\n').map((r) => r.line), [1, 2]);
    assert.throws(() => separate.push(`b\n${long}`), (e: unknown) => e instanceof CsvFileError && e.line === 3 && /record on line 4 is longer/.test(e.message));
    const together = new CsvReader();
    assert.throws(() => together.push(`h\na\n${long}`), (e: unknown) => e instanceof CsvFileError && e.line === 1 && /record on line 3 is longer/.test(e.message));
    const alone = new CsvReader();
    assert.deepEqual(alone.push('h\n').map((r) => r.line), [1]);
    assert.throws(() => alone.push(long), (e: unknown) => e instanceof CsvFileError && e.line === 2);
  });
});

describe('import JSONL reader', () => {
  it('numbers lines across chunks, skips blank ones, strips a BOM and CR, and names a line that is not JSON', () => {
    const reader = new JsonlReader();
    const out = [...reader.push('\uFEFF{"a":1}\r\n\n{"b"'), ...reader.push(':2}\nnope\n{"c":3}'), ...reader.end()];
    assert.deepEqual(out.map((r) => [r.line, r.value ?? r.text, r.problem !== undefined]), [
      [1, { a: 1 }, false],
      [3, { b: 2 }, false],
      [4, 'nope', true],
      [5, { c: 3 }, false],
    ]);
  });
});

describe('import progress', () => {
  it('on a terminal: one bar redrawn in place, closed at the end; elsewhere: a line per thousand rows', () => {
    const written: string[] = [];
    const counts = { created: 1500, updated: 0, unchanged: 0, refused: 0 };
    const bar = progressOn({ isTTY: true, write: (t: string) => written.push(t) }, 1000);
    bar.update(1000, 500, { ...counts, created: 1000 });
    bar.update(1500, 1000, counts);
    bar.finish();
    assert.equal(written.length, 3);
    assert.match(written[0]!, /^\r\[#{15}\.{15}\]  50%  1000 rows  created 1000/);
    assert.match(written[1]!, /^\r\[#{30}\] 100%  1500 rows/);
    assert.equal(written[2], '\n');

    const lines: string[] = [];
    const log = progressOn({ isTTY: false, write: (t: string) => lines.push(t) }, 1000);
    for (const rows of [400, 1000, 1400, 2600]) log.update(rows, 0, counts);
    log.finish();
    assert.deepEqual(lines, ['import: 1000 rows (created 1500, updated 0, unchanged 0, refused 0)\n', 'import: 2000 rows (created 1500, updated 0, unchanged 0, refused 0)\n']);
  });
});
