/**
 * `rollcall copy` (DESIGN.md section 2): every table of one Rollcall database
 * into another, empty one, e.g. from the embedded SQLite file to PostgreSQL. Both are migrated
 * first (so both have the same tables); the target must hold no row in any table. Tables go in
 * an order that satisfies the foreign keys (teams, then users and groups, then memberships, then
 * the rest), each in batches read by primary-key seek (through the primary-key index) and written in one transaction per batch. Afterwards each table's row count and checksum are
 * computed again on both sides and must match: the checksum is the sum, modulo 2^64, of the
 * SHA-256 of every row in a canonical form (columns sorted by name; JSON documents parsed and
 * re-serialised with sorted keys, since PostgreSQL's jsonb reorders them), so it does not depend
 * on the order rows are read in.
 *
 * Not copied: `sessions` (browser sessions of 30 minutes: everyone signs in again) and `keys`
 * (sealed under the source's master key, which the target does not share; the target's servers
 * make new ones: cookie-signed pages start over).
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Storage } from './connect.ts';
import { anyUnnumbered, numberFeeds } from './repos/events.ts';
import { tablesOf } from './dialect.ts';

export const NOT_COPIED = ['sessions', 'keys'] as const;
const FIRST = ['teams', 'users', 'groups', 'group_members', 'oauth_clients'];
const NUMBERING_ROUNDS = 10;

export class CopyError extends Error {}

export interface TableCopied {
  readonly table: string;
  readonly rows: number;
  readonly checksum: string;
}

export interface CopyProgress {
  (table: string, done: number, total: number): void;
}

type Row = Record<string, unknown>;

function canonical(value: unknown): unknown {
  // PostgreSQL's driver gives bigint columns (the events' seq and cursors) as text, SQLite's as
  // numbers: integers are compared as numbers whichever way they came (on both sides alike).
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return Number(value);
  if (typeof value === 'string' && (value.startsWith('{') || value.startsWith('['))) {
    try {
      return canonical(JSON.parse(value));
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Row)[k])]));
  }
  if (typeof value === 'bigint') return Number(value);
  return value;
}

function rowHash(row: Row): bigint {
  const ordered = Object.keys(row).sort().map((k) => [k, canonical(row[k])]);
  return BigInt(`0x${createHash('sha256').update(JSON.stringify(ordered)).digest('hex').slice(0, 16)}`);
}

const MASK = (1n << 64n) - 1n;

/** A value as the target's driver takes it: documents as JSON text (SQLite cannot bind objects). */
function forTarget(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) return JSON.stringify(value);
  return value;
}

async function countRows(db: Kysely<unknown>, table: string): Promise<number> {
  const row = (await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0];
  return Number(row?.n ?? 0);
}

/** Reads a table in primary-key order, `batch` rows at a time. */
async function* batches(storage: Storage, table: string, primaryKey: readonly string[], batch: number): AsyncGenerator<Row[]> {
  const db = storage.db as unknown as Kysely<unknown>;
  // Ordered and compared in the column's own collation, so the primary-key index serves every
  // batch; the two engines may order differently, which the order-independent checksum allows.
  const keys = primaryKey.map((c) => sql.ref(c));
  let last: unknown[] | undefined;
  for (;;) {
    const after = last ? sql`where (${sql.join(keys)}) > (${sql.join(last)})` : sql``;
    const rows = (await sql<Row>`select * from ${sql.table(table)} ${after} order by ${sql.join(keys)} limit ${sql.lit(batch)}`.execute(db)).rows;
    if (rows.length === 0) return;
    yield rows;
    const end = rows[rows.length - 1]!;
    last = primaryKey.map((c) => end[c]);
    if (rows.length < batch) return;
  }
}

async function checksumOf(storage: Storage, table: string, primaryKey: readonly string[], batch: number): Promise<{ rows: number; checksum: string }> {
  let sum = 0n;
  let rows = 0;
  for await (const chunk of batches(storage, table, primaryKey, batch)) {
    for (const row of chunk) sum = (sum + rowHash(row)) & MASK;
    rows += chunk.length;
  }
  return { rows, checksum: sum.toString(16).padStart(16, '0') };
}

/**
 * Copies every table of `from` into `to` (both already migrated), verifying counts and
 * checksums; throws CopyError naming the first table that is not empty or does not match.
 */
export async function copyDatabase(from: Storage, to: Storage, options: { batch: number; progress?: CopyProgress }): Promise<TableCopied[]> {
  const source = await tablesOf(from.db as unknown as Kysely<unknown>, from.hooks.name);
  const target = new Map((await tablesOf(to.db as unknown as Kysely<unknown>, to.hooks.name)).map((t) => [t.name, t]));
  for (const t of target.values()) {
    const n = await countRows(to.db as unknown as Kysely<unknown>, t.name);
    if (n > 0) throw new CopyError(`the target is not empty: table ${t.name} holds ${n} rows (copy only into a new, empty database)`);
  }
  const tables = source
    .filter((t) => !(NOT_COPIED as readonly string[]).includes(t.name))
    .sort((a, b) => {
      const ia = FIRST.indexOf(a.name);
      const ib = FIRST.indexOf(b.name);
      return (ia < 0 ? FIRST.length : ia) - (ib < 0 ? FIRST.length : ib) || a.name.localeCompare(b.name);
    });
  for (const t of tables) {
    if (!target.has(t.name)) throw new CopyError(`the target has no table ${t.name}: are both databases of the same Rollcall version?`);
    if (t.primaryKey.length === 0) throw new CopyError(`table ${t.name} has no primary key`);
  }
  // A PostgreSQL source's feed events are numbered by their readers (migration 015): number
  // every committed one first, so the copy holds real numbers. A stopped source has none left
  // after one round; one still written to always could, and a placeholder copied would never be
  // numbered on a SQLite target (and would clash with the target's own on PostgreSQL).
  for (let round = 0; round < NUMBERING_ROUNDS && (await anyUnnumbered(from.db)); round++) await numberFeeds(from.db);
  if (await anyUnnumbered(from.db)) throw new CopyError('the source is still being written to (its change feed keeps getting new events): stop its Rollcall instances, then copy');
  const copied: TableCopied[] = [];
  for (const t of tables) {
    const total = await countRows(from.db as unknown as Kysely<unknown>, t.name);
    let done = 0;
    let sum = 0n;
    options.progress?.(t.name, 0, total);
    for await (const rows of batches(from, t.name, t.primaryKey, options.batch)) {
      for (const row of rows) sum = (sum + rowHash(row)) & MASK;
      const columns = Object.keys(rows[0]!);
      await (to.db as unknown as Kysely<unknown>).transaction().execute(async (trx) => {
        // Bounded statements: at most ~30,000 parameters each (PostgreSQL allows 65,535).
        const perStatement = Math.max(1, Math.floor(30_000 / columns.length));
        for (let i = 0; i < rows.length; i += perStatement) {
          const values = rows.slice(i, i + perStatement).map((r) => sql`(${sql.join(columns.map((c) => forTarget(r[c])))})`);
          await sql`insert into ${sql.table(t.name)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(values)}`.execute(trx);
        }
      });
      done += rows.length;
      options.progress?.(t.name, done, total);
    }
    const expected = { rows: done, checksum: sum.toString(16).padStart(16, '0') };
    const actual = await checksumOf(to, t.name, t.primaryKey, options.batch);
    if (actual.rows !== expected.rows || actual.checksum !== expected.checksum) {
      throw new CopyError(`table ${t.name} does not match after copying: ${expected.rows} rows (checksum ${expected.checksum}) read, ${actual.rows} rows (checksum ${actual.checksum}) in the target`);
    }
    copied.push({ table: t.name, ...expected });
  }
  return copied;
}
