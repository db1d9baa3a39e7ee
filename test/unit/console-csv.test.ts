/**
 * The console's CSV exports (issue 30 item 7) below the HTTP level. The encoder (console/csv.ts),
 * as a property: any records, encoded and read back by the import's RFC 4180 reader
 * (import/csv.ts), give the same fields, except that a field a spreadsheet would run as a formula
 * (starting with = + - @, a tab or a CR; OWASP "CSV Injection") comes back with a quote before it,
 * so no field read back starts a formula.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { csvCell, csvRecord } from '../../src/console/csv.ts';
import { parseCsv } from '../../src/import/csv.ts';

const FORMULA = /^[=+\-@\t\r]/;

/** Fields rich in what CSV and spreadsheets treat specially, and any text. */
const field = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'Z', '1', ' ', '"', ',', '\r', '\n', '\r\n', '=', '+', '-', '@', '\t', "'", 'é', '😀', '\u202E'), maxLength: 12 }),
  fc.string({ maxLength: 20 }).filter((s) => !s.startsWith('\uFEFF')),
);
/** At least two fields: a record of one empty field is a blank line, which RFC 4180 readers skip. */
const record = fc.array(field, { minLength: 2, maxLength: 6 });

describe('console CSV encoder (RFC 4180, formula-safe)', () => {
  it('property: what is encoded reads back the same, formulas behind a quote', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 8 }), (records) => {
        const text = records.map(csvRecord).join('');
        const read = parseCsv(text);
        assert.deepEqual(read.map((r) => r.problem), records.map(() => undefined));
        assert.deepEqual(read.map((r) => r.fields), records.map((r) => r.map((f) => (FORMULA.test(f) ? `'${f}` : f))));
        for (const r of read) for (const f of r.fields) assert.ok(!FORMULA.test(f), `a field starts a formula: ${JSON.stringify(f)}`);
      }),
      { numRuns: 500 },
    );
  });

  it('examples: quoting only when needed, quotes doubled, formula prefixes', () => {
    assert.equal(csvCell('plain'), 'plain');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('=1+1'), "'=1+1");
    assert.equal(csvCell('=HYPERLINK("x")'), '"\'=HYPERLINK(""x"")"');
    assert.equal(csvCell('-2'), "'-2");
    assert.equal(csvRecord(['a', 'b\nc']), 'a,"b\nc"\r\n');
  });
});
