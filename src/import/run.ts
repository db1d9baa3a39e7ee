/**
 * `rollcall import` as a domain operation: a CSV or JSONL file of users or groups read as a
 * stream, row by row (csv.ts, jsonl.ts, columns.ts, records.ts), in batches of up to
 * BULK_MAX_OPERATIONS rows; each batch's upsert decided (upsert.ts) and its writes run as one
 * SCIM Bulk request in process (src/scim/bulk: each operation its own transaction, audit row and
 * event, exactly as the same request sent alone), with the caller's context (the CLI's actor).
 * A row that cannot be mapped, or that the server refuses, goes to the refused file as one JSON
 * line `{line, row, status, scimType, detail}` and the import goes on; the counts of created,
 * updated, unchanged and refused rows come back. A failure no SCIM rule names (a database gone)
 * stops the run at once with an ImportServerError naming the first line not imported, rather
 * than refusing every row after it. No SQL here.
 *
 * Memory: one batch of rows, plus, to find keys repeated in the file, a fingerprint of each
 * distinct key (the first 8 bytes of the SHA-256 of the case-folded key, as a bigint) with its
 * line: under 100 bytes per distinct key in the Map, whatever the key's length. Two keys with the
 * same fingerprint (odds about n^2 / 2^65 for n distinct keys) would make the later row refused
 * as a repeat of the earlier.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { BULK_MAX_OPERATIONS, BULK_REQUEST, isFailure, planBulk, runBulk } from '../scim/bulk/index.ts';
import type { ScimContext } from '../scim/context.ts';
import { typesOf } from '../scim/context.ts';
import { lower } from '../scim/schema/registry.ts';
import { CsvFileError, CsvReader } from './csv.ts';
import type { CsvRecord } from './csv.ts';
import { CsvLayout, KEY_COLUMN, kindOfHeader } from './columns.ts';
import { JsonlReader } from './jsonl.ts';
import type { JsonlRecord } from './jsonl.ts';
import type { Progress } from './progress.ts';
import { kindOfRecord, recordRow } from './records.ts';
import { ImportFileError, ImportServerError } from './rows.ts';
import type { ImportKind, ImportRow, Refusal } from './rows.ts';
import { decide } from './upsert.ts';
import type { Decision } from './upsert.ts';

export type ImportFormat = 'csv' | 'jsonl';

export interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  refused: number;
}

export interface ImportOptions {
  readonly format: ImportFormat;
  /** users or groups; read from the header (CSV) or the first resource (JSONL) when absent. */
  readonly kind?: ImportKind;
  /** Where refused rows go; written only when a row is refused (an older file there is removed otherwise). */
  readonly refusedPath: string;
  readonly progress?: (totalBytes: number) => Progress;
}

export interface ImportSummary extends ImportCounts {
  readonly kind: ImportKind | undefined;
  readonly rows: number;
  /** The refused file, when some row was refused. */
  readonly refusedFile?: string;
}

/** The format a file's name says: .csv, or .jsonl / .ndjson. */
export function formatOfPath(path: string): ImportFormat | undefined {
  const name = path.toLowerCase();
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson')) return 'jsonl';
  return undefined;
}

/** The refused file's lines, written a batch at a time; the file is made at the first refusal. */
class RefusedFile {
  readonly path: string;
  #handle: FileHandle | undefined;
  constructor(path: string) {
    this.path = path;
  }
  get used(): boolean {
    return this.#handle !== undefined;
  }
  async write(entries: readonly { row: ImportRow; refusal: Refusal }[]): Promise<void> {
    if (entries.length === 0) return;
    this.#handle ??= await open(this.path, 'w');
    const text = entries
      .map(({ row, refusal }) => JSON.stringify({ line: row.line, row: row.raw, status: refusal.status, ...(refusal.scimType ? { scimType: refusal.scimType } : {}), detail: refusal.detail }))
      .join('\n');
    await this.#handle.write(`${text}\n`);
  }
  async close(): Promise<void> {
    if (this.#handle) await this.#handle.close();
    else await rm(this.path, { force: true });
  }
}

const refusalOfResponse = (status: string, response: unknown): Refusal => {
  const body = (response ?? {}) as { scimType?: unknown; detail?: unknown };
  return {
    status: Number(status),
    ...(typeof body.scimType === 'string' ? { scimType: body.scimType } : {}),
    detail: typeof body.detail === 'string' ? body.detail : `the server answered ${status}`,
  };
};

/** Runs one batch: the decisions, then their writes as one Bulk; the refusals come back for the refused file. */
async function runBatch(ctx: ScimContext, kind: ImportKind, rows: readonly ImportRow[], counts: ImportCounts): Promise<{ row: ImportRow; refusal: Refusal }[]> {
  const decisions = await decide(ctx, kind, rows);
  const refused: { row: ImportRow; refusal: Refusal }[] = [];
  const writes: Extract<Decision, { kind: 'create' | 'update' }>[] = [];
  for (const d of decisions) {
    if (d.kind === 'refused') refused.push({ row: d.row, refusal: d.refusal });
    else if (d.kind === 'unchanged') counts.unchanged++;
    else writes.push(d);
  }
  if (writes.length > 0) {
    const endpoint = kind === 'users' ? '/Users' : '/Groups';
    const body = {
      schemas: [BULK_REQUEST],
      Operations: writes.map((w, i) =>
        w.kind === 'create'
          ? { method: 'POST', path: endpoint, bulkId: `line${w.row.line}-${i}`, data: w.data }
          : { method: 'PATCH', path: `${endpoint}/${encodeURIComponent(w.id)}`, data: w.data },
      ),
    };
    // A failure no SCIM rule names would be answered 500 and the Bulk would go on with the next
    // operation; rethrown here it leaves runBulk at once, and the run stops (importFile).
    const response = await runBulk(ctx, planBulk(body), undefined, {
      unexpected(error) {
        throw error;
      },
    });
    // Without failOnErrors every operation runs, and the response lists them in request order.
    for (const [i, w] of writes.entries()) {
      const result = response.Operations[i];
      if (!result) refused.push({ row: w.row, refusal: { status: 500, detail: 'the operation was not run' } });
      else if (isFailure(result)) refused.push({ row: w.row, refusal: refusalOfResponse(result.status, result.response) });
      else if (w.kind === 'create') counts.created++;
      else counts.updated++;
    }
  }
  counts.refused += refused.length;
  refused.sort((a, b) => a.row.line - b.row.line);
  return refused;
}

/** Imports the file at `path` into the context's team. Throws ImportFileError when the file cannot be read as asked. */
export async function importFile(ctx: ScimContext, path: string, options: ImportOptions): Promise<ImportSummary> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new ImportFileError(`${path} is not a file`);
    size = info.size;
  } catch (error) {
    if (error instanceof ImportFileError) throw error;
    throw new ImportFileError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const progress = options.progress?.(size);
  const counts: ImportCounts = { created: 0, updated: 0, unchanged: 0, refused: 0 };
  const refusedFile = new RefusedFile(options.refusedPath);
  let kind = options.kind;
  let rows = 0;
  let batch: ImportRow[] = [];
  /** Fingerprints of the keys seen earlier in the file, with their line: a key repeated is refused, however the rows fall into batches. */
  const seen = new Map<bigint, number>();

  const flush = async (bytesRead: number): Promise<void> => {
    if (batch.length === 0 || kind === undefined) return;
    const taken = batch;
    batch = [];
    let refusals: { row: ImportRow; refusal: Refusal }[];
    try {
      refusals = await runBatch(ctx, kind, taken, counts);
    } catch (error) {
      // A look-up or a write failed without a SCIM answer: the batches before this one are committed, this one maybe in part.
      const line = taken[0]!.line;
      const message = error instanceof Error ? error.message : String(error);
      throw new ImportServerError(
        `the server failed: ${message}; rows before line ${line} were imported; run it again once the server is back: imported rows are updated, not duplicated`,
        line,
      );
    }
    await refusedFile.write(refusals);
    rows += taken.length;
    progress?.update(rows, bytesRead, counts);
  };
  const add = async (row: ImportRow, bytesRead: number): Promise<void> => {
    if (row.refusal === undefined && row.key !== undefined) {
      const key = createHash('sha256').update(lower(row.key)).digest().readBigUInt64BE(0);
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        row = { line: row.line, raw: row.raw, refusal: { status: 409, scimType: 'uniqueness', detail: `${KEY_COLUMN[kind!]} "${row.key}" is already on line ${earlier} of this file` } };
      } else seen.set(key, row.line);
    }
    batch.push(row);
    if (batch.length >= BULK_MAX_OPERATIONS) await flush(bytesRead);
  };

  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  try {
    if (options.format === 'csv') {
      const reader = new CsvReader();
      let layout: CsvLayout | undefined;
      const take = async (records: CsvRecord[]): Promise<void> => {
        for (const record of records) {
          if (!layout) {
            kind ??= kindOfHeader(record.fields);
            if (!kind) throw new ImportFileError('the header has neither a userName column (users) nor displayName or members (groups); say which with --kind');
            layout = new CsvLayout(kind, kind === 'users' ? typesOf(ctx).User : typesOf(ctx).Group, record);
            continue;
          }
          await add(layout.row(record), stream.bytesRead);
        }
      };
      for await (const chunk of stream) await take(reader.push(chunk as string));
      await take(reader.end());
      if (!layout) throw new ImportFileError(`${path} is empty: a CSV file starts with a header line`);
    } else {
      const reader = new JsonlReader();
      // Lines read before the kind is known (those that are no resource) wait for it.
      const waiting: JsonlRecord[] = [];
      const take = async (records: JsonlRecord[]): Promise<void> => {
        for (const record of records) {
          kind ??= kindOfRecord(record.value);
          if (!kind) {
            waiting.push(record);
            continue;
          }
          for (const early of waiting.splice(0)) await add(recordRow(kind, early), stream.bytesRead);
          await add(recordRow(kind, record), stream.bytesRead);
        }
      };
      for await (const chunk of stream) await take(reader.push(chunk as string));
      await take(reader.end());
      if (waiting.length > 0) {
        // No line was a resource: refused as they are, as users unless told otherwise.
        kind = 'users';
        for (const early of waiting.splice(0)) await add(recordRow(kind, early), stream.bytesRead);
      }
    }
    await flush(stream.bytesRead);
  } catch (error) {
    if (!(error instanceof CsvFileError) && !(error instanceof ImportFileError)) throw error;
    // Batches already sent are committed: say so, so the user knows a re-run is the fix. The first
    // row not sent is the batch's first, or, the batch just sent, the first the reader lost.
    const line = batch[0]?.line ?? (error instanceof CsvFileError ? error.line : undefined);
    const written = rows === 0
      ? ' (nothing was written)'
      : `; rows before ${line !== undefined ? `line ${line}` : 'the line named'} were imported; fix the file and run it again: imported rows are updated, not duplicated`;
    throw new ImportFileError(error.message + written);
  } finally {
    stream.destroy();
    progress?.finish();
    await refusedFile.close();
  }
  return { kind, rows, ...counts, ...(refusedFile.used ? { refusedFile: refusedFile.path } : {}) };
}
