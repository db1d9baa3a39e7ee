/**
 * Every difference between SQLite and PostgreSQL that code above the driver must know, behind
 * one object of named hooks. Nothing else in Rollcall asks which engine it runs on.
 */
import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';

export type EngineName = 'sqlite' | 'postgres';

export interface DialectHooks {
  readonly name: EngineName;
  /** A stored JSON document as read from the driver (text on SQLite, parsed jsonb on pg). */
  parseJson(value: unknown): Record<string, unknown>;
  /** A document as a statement parameter. */
  toJson(value: unknown): string;
  /** Whether a driver error is a unique-constraint violation. */
  isUniqueViolation(error: unknown): boolean;
  /** Whether a driver error is a lost serialization/lock race worth retrying. */
  isRetryable(error: unknown): boolean;
  /**
   * The text at `keys` inside the JSON column `column` (of table alias `table`), or NULL.
   * Keys are attribute names exactly as stored.
   */
  jsonText(table: string, column: string, keys: readonly string[]): RawBuilder<string | null>;
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const jsonPathSqlite = (keys: readonly string[]): string =>
  '$' + keys.map((k) => `."${k.replace(/"/g, '""')}"`).join('');

export const sqliteHooks: DialectHooks = {
  name: 'sqlite',
  parseJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value as Record<string, unknown>)),
  toJson: (value) => JSON.stringify(value),
  isUniqueViolation: (error) =>
    /UNIQUE constraint failed|PRIMARY KEY/.test(messageOf(error)) ||
    codeOf(error) === 'SQLITE_CONSTRAINT_UNIQUE' ||
    codeOf(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isRetryable: (error) => /database is locked|SQLITE_BUSY/.test(messageOf(error)),
  jsonText: (table, column, keys) =>
    sql<string | null>`json_extract(${sql.ref(`${table}.${column}`)}, ${jsonPathSqlite(keys)})`,
};

export const postgresHooks: DialectHooks = {
  name: 'postgres',
  parseJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value as Record<string, unknown>)),
  toJson: (value) => JSON.stringify(value),
  isUniqueViolation: (error) => codeOf(error) === '23505',
  isRetryable: (error) => codeOf(error) === '40001' || codeOf(error) === '40P01',
  jsonText: (table, column, keys) =>
    sql<string | null>`(${sql.ref(`${table}.${column}`)} #>> ${sql.val(keys)}::text[])`,
};
