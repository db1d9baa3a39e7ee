/**
 * How `rollcall import` shows its progress on stderr (stdout keeps the summary): on a terminal a
 * bar redrawn in place, by the share of the file's bytes read, with the rows done; otherwise (a
 * pipe, a log) a line each time another thousand rows are done, so a log shows steady progress
 * without a line per row.
 */
import type { ImportCounts } from './run.ts';

export interface ProgressSink {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  /** After each batch: rows done so far, bytes of the file read, the counts so far. */
  update(rows: number, bytesRead: number, counts: ImportCounts): void;
  /** The import ended: the bar's line is closed. */
  finish(): void;
}

export const PROGRESS_EVERY = 1000;

const countsText = (c: ImportCounts): string => `created ${c.created}, updated ${c.updated}, unchanged ${c.unchanged}, refused ${c.refused}`;

export function progressOn(sink: ProgressSink, totalBytes: number): Progress {
  if (sink.isTTY === true) {
    let drawn = false;
    const width = 30;
    return {
      update(rows, bytesRead, counts) {
        const share = totalBytes === 0 ? 1 : Math.min(1, bytesRead / totalBytes);
        const filled = Math.round(share * width);
        sink.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(share * 100)).padStart(3)}%  ${rows} rows  ${countsText(counts)}\x1b[K`);
        drawn = true;
      },
      finish() {
        if (drawn) sink.write('\n');
      },
    };
  }
  let reported = 0;
  return {
    update(rows, _bytesRead, counts) {
      const step = Math.floor(rows / PROGRESS_EVERY) * PROGRESS_EVERY;
      if (step <= reported) return;
      reported = step;
      sink.write(`import: ${step} rows (${countsText(counts)})\n`);
    },
    finish() {},
  };
}
