/**
 * Issue 27 item 11: a poll finds its subscription by its token's digest through an index
 * (migration 017), on both engines: the plan of the very statement `subscriptionBySecret` runs
 * (the one `pollSubscription` calls for every poll) searches `event_subscriptions_secret`
 * instead of reading the table, among thousands of subscriptions of many teams.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { digestOf } from '../../src/events/subscriptions.ts';
import { newId } from '../../src/ids.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { insertSubscription, subscriptionBySecret } from '../../src/storage/repos/subscriptions.ts';
import type { SubscriptionRow } from '../../src/storage/repos/subscriptions.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

/** Keeps the compiled form of every query run through it. */
class Seen implements KyselyPlugin {
  readonly queries: CompiledQuery[] = [];
  readonly #storage: Storage;
  constructor(storage: Storage) {
    this.#storage = storage;
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries.push(this.#storage.db.getExecutor().compileQuery(args.node, args.queryId));
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const T = '2026-01-01T00:00:00.000Z';
const SUBSCRIPTIONS = 3_000;

const subscription = (i: number): SubscriptionRow => ({
  id: newId(), team_id: `TEAM${String(i % 50).padStart(16, '0')}`, method: i % 2 === 0 ? 'poll' : 'push',
  url: i % 2 === 0 ? null : `https://r${i}.example/events`, events: null, full: 0, state: 'active', paused_reason: null, cursor: 0,
  failures: 0, failing_since: null, next_attempt_at: T, lease_owner: null, lease_until: null,
  secret_hash: i % 2 === 0 ? digestOf(`rce_token${i}`) : null, created_at: T, updated_at: T, creator_token: null, creator_user: null, format: 'set', webhook_secret: null, webhook_previous_secret: null, webhook_previous_until: null, ssf: null,
});

for (const engine of engines) {
  describe(`poll tokens by index on ${engine.name}`, () => {
    let database: TestDatabase;
    let storage: Storage;
    before(async () => {
      database = await engine.open();
      storage = database.storage;
      await storage.db.transaction().execute(async (trx) => {
        for (let i = 0; i < SUBSCRIPTIONS; i++) await insertSubscription(trx, subscription(i));
      });
      await sql`analyze`.execute(storage.db);
    });
    after(() => database.dispose());

    /** The plan of a statement, as text (SQLite's EXPLAIN QUERY PLAN details; PostgreSQL's EXPLAIN). */
    async function plan(q: CompiledQuery): Promise<string> {
      if (storage.hooks.name === 'sqlite') {
        const rows = (await storage.db.executeQuery(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]))).rows as { detail: string }[];
        return rows.map((r) => r.detail).join('\n');
      }
      const rows = (await storage.db.executeQuery(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]))).rows as { 'QUERY PLAN': string }[];
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    }

    it('the poll credential lookup searches the secret_hash index, not the table', async () => {
      const seen = new Seen(storage);
      const found = await subscriptionBySecret(storage.db.withPlugin(seen), digestOf('rce_token1234'));
      assert.equal(found?.secret_hash, digestOf('rce_token1234'));
      assert.equal(seen.queries.length, 1);
      const text = await plan(seen.queries[0]!);
      if (storage.hooks.name === 'sqlite') assert.match(text, /SEARCH event_subscriptions USING INDEX event_subscriptions_secret \(secret_hash=\?\)/, text);
      else assert.match(text, /Index Scan using event_subscriptions_secret on event_subscriptions[\s\S]*Index Cond: \(\(?secret_hash\)?(::text)? = /, text);
    });
  });
}
