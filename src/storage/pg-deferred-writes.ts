/**
 * PostgreSQL: a transaction's writes whose outcome nobody reads (statements.ts `defineWrite`: a
 * created user's row, the audit row, the feed's event, the counters' upsert, a token pair) are
 * not sent one by one. They wait on the transaction's connection and go out together, as one
 * statement (every write but the last in a data-modifying WITH), just before the transaction's
 * next other statement, or at its commit. Its BEGIN waits too: a transaction that runs nothing
 * but such writes (POST /Users) sends them as one statement with no BEGIN and no COMMIT, which
 * is a transaction of its own. One round trip.
 *
 * What waits goes out in the same round trip as the statement behind it: the connection runs in
 * node-postgres's pipeline mode, and the BEGIN, the combined writes and the next statement (or
 * the COMMIT) are handed over together, each with its own answer. A PATCH is 3 round trips (the
 * BEGIN with the read, the update, the writes with the COMMIT), a refresh grant 2
 * (test/storage/pg-round-trips.test.ts pins them).
 * The first failure in sending order is the answer: a statement behind a failed one fails only
 * because the transaction is aborted, and a COMMIT behind failed writes ends the transaction
 * without committing it (PostgreSQL answers it ROLLBACK).
 *
 * Why this keeps a transaction's meaning:
 * - Nothing of the transaction reads before its writes are sent: any other statement flushes
 *   them first, so every read sees every earlier write.
 * - One statement is atomic: a write that fails (a unique violation) fails the whole statement
 *   and the transaction with it, at the next statement or at the commit, still inside the
 *   transaction's work, which then rolls back (Kysely sends ROLLBACK; for a transaction never
 *   begun there is nothing to roll back).
 * - The sub-statements of one WITH see one snapshot and not each other's rows. The deferrable
 *   writes read nothing the others write (new rows, counters added to); two writes to one table
 *   never share a statement (the second flushes the first), so no row is changed twice in one.
 *   Foreign keys are checked at the end of the statement, when every row of it is there.
 * - A BEGIN that names an isolation level or an access mode is always sent: such a
 *   transaction's writes never run outside it.
 *
 * A sole statement (statements.ts `defineSole`: a whole write in one data-modifying WITH) that
 * comes first in its transaction goes alone, without its BEGIN: PostgreSQL runs one statement as
 * a transaction of its own, so no COMMIT round trip follows it and the row locks it takes are
 * held only while it runs. Nothing may follow it in that transaction; its COMMIT or ROLLBACK
 * sends nothing (a sole statement that failed rolled itself back).
 *
 * Connection-level state, driven by the SQL texts Kysely sends (`begin`, `commit`, `rollback`):
 * namingPool (pg-statements.ts) keeps one DeferringConnection per pooled client.
 */
import type { PostgresQueryResult } from 'kysely';

/** One write waiting for its transaction's next statement. */
export interface PendingWrite {
  readonly text: string;
  readonly values: readonly unknown[];
  /** The table it writes: two writes of one table never go in one statement. */
  readonly table: string;
}

const WRITE_HEAD = /^\s*(?:insert\s+into|update|delete\s+from)\s+"([^"]+)"/i;

/**
 * The table `text` writes, if it may be deferred: one INSERT, UPDATE or DELETE of a named table,
 * no WITH of its own (PostgreSQL allows a data-modifying WITH only at a statement's top level),
 * placeholders `$n` only (no dollar quoting). Otherwise the reason it may not.
 */
export function deferrableTable(text: string): { table: string } | { problem: string } {
  const head = WRITE_HEAD.exec(text);
  if (!head) return { problem: 'not an INSERT, UPDATE or DELETE of one named table' };
  if (renumbered(text, 0) === undefined) return { problem: 'a dollar sign that is not a placeholder' };
  return { table: head[1]! };
}

/**
 * `text` with each placeholder `$n` outside quotes made `$(n + offset)`; undefined when a `$`
 * outside quotes is not a placeholder (dollar quoting), which would make the rewrite unsafe.
 */
export function renumbered(text: string, offset: number): string | undefined {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      // A quoted literal or identifier, its doubled quotes included, copied as it is.
      let j = i + 1;
      for (;;) {
        const close = text.indexOf(c, j);
        if (close < 0) return undefined;
        if (text[close + 1] === c) {
          j = close + 2;
          continue;
        }
        j = close + 1;
        break;
      }
      out += text.slice(i, j);
      i = j;
    } else if (c === '$') {
      const digits = /^\d+/.exec(text.slice(i + 1, i + 12));
      if (!digits) return undefined;
      out += `$${Number(digits[0]) + offset}`;
      i += 1 + digits[0].length;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `writes` as one statement: each but the last in a WITH, placeholders renumbered in order; `texts` keeps the combined texts built. */
export function combinedWrites(writes: readonly PendingWrite[], texts: CombinedTexts): { text: string; values: unknown[] } {
  if (writes.length === 1) return { text: writes[0]!.text, values: [...writes[0]!.values] };
  const values: unknown[] = [];
  for (const write of writes) values.push(...write.values);
  return { text: texts.textOf(writes), values };
}

/** A node of the combined texts known, by the sequence of the writes' texts (each a template's own string). */
interface Combination {
  readonly next: Map<string, Combination>;
  text?: string;
}

/** Combinations remembered: as many as the code's write paths, bounded all the same. */
const MAX_COMBINATIONS = 256;

/**
 * The combined texts of one storage's deferred writes, each built once per sequence of texts:
 * the same string every time, so looking it up by name costs no hashing of a fresh string. The
 * storage's PreparedNames (pg-statements.ts) owns one, which every connection of its pool uses.
 */
export class CombinedTexts {
  readonly #root: Combination = { next: new Map() };
  #known = 0;

  textOf(writes: readonly PendingWrite[]): string {
    let node = this.#root;
    for (const write of writes) {
      let next = node.next.get(write.text);
      if (!next) {
        if (this.#known >= MAX_COMBINATIONS) return buildCombined(writes);
        next = { next: new Map() };
        node.next.set(write.text, next);
        this.#known++;
      }
      node = next;
    }
    node.text ??= buildCombined(writes);
    return node.text;
  }
}

function buildCombined(writes: readonly PendingWrite[]): string {
  let offset = 0;
  const parts = writes.map((write) => {
    const text = renumbered(write.text, offset);
    if (text === undefined) throw new Error(`not a deferrable write: ${write.text}`);
    offset += write.values.length;
    return text;
  });
  const last = parts.pop()!;
  return `with ${parts.map((part, i) => `"rc_write_${i}" as (${part})`).join(', ')} ${last}`;
}

/** One statement for node-postgres. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * Hands `statements` to the connection at once, in order, and answers one promise per statement.
 * The connection pipelines them (node-postgres's pipeline mode): they go out together and the
 * answers come back together, one round trip; each still has its own answer or error.
 */
export type Send = (statements: readonly Statement[]) => Promise<PostgresQueryResult<unknown>>[];

const PLAIN_BEGIN = /^\s*begin\s*;?\s*$/i;
const ANY_BEGIN = /^\s*(?:begin|start\s+transaction)\b/i;
const COMMIT = /^\s*commit\s*;?\s*$/i;
const ROLLBACK = /^\s*rollback\s*;?\s*$/i;

/** What Kysely reads of an answer it was not sent (numAffectedRows of an INSERT: nobody reads it). */
const answered = (command: 'BEGIN' | 'COMMIT' | 'ROLLBACK' | 'INSERT'): PostgresQueryResult<unknown> =>
  ({ command, rowCount: 0, rows: [] }) as unknown as PostgresQueryResult<unknown>;

/** What a connection asks of the statements it is handed (pg-statements.ts PreparedNames). */
export interface TextKinds {
  /** The table a deferrable text writes, or undefined for every other text. */
  deferredTable(text: string): string | undefined;
  /** Names a combined text once it is hot, when it should run prepared. */
  noteCombined(text: string): void;
  /** A statement that is a whole transaction's work by itself (statements.ts `defineSole`). */
  sole(text: string): boolean;
  /** Where the combined texts of the storage's deferred writes are kept. */
  readonly combinations: CombinedTexts;
}

/** One pooled connection's transaction state: its BEGIN not sent yet, its writes waiting. */
export class DeferringConnection {
  readonly #send: Send;
  readonly #kinds: TextKinds;
  /** The transaction's BEGIN while it has not been sent; undefined outside a transaction or once sent. */
  #begin: string | undefined;
  #open = false;
  #pending: PendingWrite[] = [];
  /** A sole statement ran as the transaction, alone: its COMMIT or ROLLBACK sends nothing. */
  #ranAlone = false;

  constructor(send: Send, kinds: TextKinds) {
    this.#send = send;
    this.#kinds = kinds;
  }

  async query(text: string, values: readonly unknown[]): Promise<PostgresQueryResult<unknown>> {
    if (!this.#open) {
      if (PLAIN_BEGIN.test(text)) {
        this.#open = true;
        this.#begin = text;
        return answered('BEGIN');
      }
      if (ANY_BEGIN.test(text)) this.#open = true;
      return this.#behind({ text, values });
    }
    if (this.#ranAlone) {
      if (COMMIT.test(text)) return this.#finish('COMMIT');
      if (ROLLBACK.test(text)) return this.#finish('ROLLBACK');
      throw new Error('a sole statement is its transaction\'s whole work: nothing may follow it');
    }
    if (this.#begin !== undefined && this.#pending.length === 0 && this.#kinds.sole(text)) {
      // Nothing sent or waiting: the statement is the transaction, alone (PostgreSQL runs one
      // statement atomically), and no COMMIT round trip follows it. Should it fail, it has rolled
      // itself back.
      this.#begin = undefined;
      this.#ranAlone = true;
      return this.#send([{ text, values }])[0]!;
    }
    const table = this.#kinds.deferredTable(text);
    if (table !== undefined) {
      // Two writes of one table never share a statement: the BEGIN and the first go now, so the
      // transaction is open on the server before either runs.
      if (this.#pending.some((w) => w.table === table)) await this.#behind(undefined);
      this.#pending.push({ text, values: [...values], table });
      return answered('INSERT');
    }
    if (COMMIT.test(text)) return this.#commit(text);
    if (ROLLBACK.test(text)) return this.#rollback(text);
    return this.#behind({ text, values });
  }

  /** Forgets the connection's transaction (it goes back to the pool). */
  reset(): void {
    this.#open = false;
    this.#begin = undefined;
    this.#pending = [];
    this.#ranAlone = false;
  }

  /** The end of a transaction a sole statement was: nothing left to send. */
  #finish(command: 'COMMIT' | 'ROLLBACK'): PostgresQueryResult<unknown> {
    this.reset();
    return answered(command);
  }

  /**
   * Sends the transaction's BEGIN if it is still waiting, its waiting writes as one statement,
   * and `next`, in one pipeline. Answers `next`'s result once every answer is in; the first
   * failure in sending order is the answer (a statement behind a failed one fails only because
   * the transaction is aborted). Without `next`, answers the last statement sent.
   */
  async #behind(next: Statement | undefined): Promise<PostgresQueryResult<unknown>> {
    const statements: Statement[] = [];
    if (this.#begin !== undefined) {
      statements.push({ text: this.#begin, values: [] });
      this.#begin = undefined;
    }
    if (this.#pending.length > 0) {
      const combined = combinedWrites(this.#pending, this.#kinds.combinations);
      // A single write is its own template's text, named already.
      if (this.#pending.length > 1) this.#kinds.noteCombined(combined.text);
      this.#pending = [];
      statements.push(combined);
    }
    if (next) statements.push(next);
    if (statements.length === 0) return answered('INSERT');
    const answers = await Promise.allSettled(this.#send(statements));
    for (const answer of answers) if (answer.status === 'rejected') throw answer.reason;
    return (answers.at(-1) as PromiseFulfilledResult<PostgresQueryResult<unknown>>).value;
  }

  async #commit(text: string): Promise<PostgresQueryResult<unknown>> {
    if (this.#begin !== undefined) {
      // Never begun: the waiting writes are the whole transaction, one statement on its own.
      // Should it fail, the transaction stays open here (nothing begun), and its ROLLBACK is answered here.
      const begin = this.#begin;
      this.#begin = undefined;
      try {
        await this.#behind(undefined);
      } catch (error) {
        this.#begin = begin;
        throw error;
      }
      this.reset();
      return answered('COMMIT');
    }
    // The waiting writes and the COMMIT in one pipeline. Should the writes fail, PostgreSQL ends
    // the aborted transaction at that COMMIT (answering ROLLBACK) and the writes' error is the
    // answer; the ROLLBACK Kysely sends then finds no transaction, which PostgreSQL only warns of.
    const result = await this.#behind({ text, values: [] });
    this.reset();
    return result;
  }

  async #rollback(text: string): Promise<PostgresQueryResult<unknown>> {
    const begun = this.#begin === undefined;
    this.reset();
    return begun ? this.#send([{ text, values: [] }])[0]! : answered('ROLLBACK');
  }
}
