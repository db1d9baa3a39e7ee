/**
 * The ordered list of migrations and the function that applies them (at start and by
 * `rollcall migrate`). Kysely's Migrator takes a lock, so concurrent starts on one PostgreSQL
 * apply each migration once.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Migration, MigrationProvider, MigrationResultSet } from 'kysely/migration';
import type { Storage } from '../connect.ts';
import { migration001 } from './001_core.ts';
import { migration002 } from './002_oauth.ts';
import { migration003 } from './003_audit.ts';
import { migration004 } from './004_member_order.ts';
import { migration005 } from './005_sessions_keys.ts';
import { migration006 } from './006_user_name_claims.ts';
import { migration007 } from './007_events.ts';
import { migration008 } from './008_provisioning_tokens.ts';
import { migration009 } from './009_schema_extensions.ts';
import { migration010 } from './010_team_counters.ts';
import { migration011 } from './011_feed_btrees.ts';
import { migration012 } from './012_text_search.ts';
import { migration013 } from './013_feed_numbered_at_commit.ts';
import { migration014 } from './014_user_name_order.ts';
import { migration015 } from './015_feed_numbered_by_readers.ts';
import { migration016 } from './016_team_limits.ts';
import { migration017 } from './017_subscription_secret_index.ts';
import { migration018 } from './018_subscription_creators.ts';
import { migration019 } from './019_path_safe_schema_urns.ts';
import { migration020 } from './020_client_secrets.ts';
import { migration021 } from './021_client_assertions.ts';
import { migration022 } from './022_webhook_subscriptions.ts';
import { migration023 } from './023_roles_entitlements.ts';
import { migration024 } from './024_async_requests.ts';
import { migration025 } from './025_shared_signals.ts';
import { migration026 } from './026_delta_query.ts';
import { migration027 } from './027_connections.ts';
import { migration028 } from './028_setup_links.ts';
import { migration029 } from './029_second_factors.ts';
import { migration030 } from './030_admin_password_links.ts';
import { migration032 } from './032_accent_folded_search.ts';
import { migration033 } from './033_console_indexes.ts';
import { migration034 } from './034_member_search.ts';

export function migrationsFor(storage: Storage): Record<string, Migration> {
  return {
    '001_core': migration001(storage.hooks.name),
    '002_oauth': migration002(),
    '003_audit': migration003(),
    '004_member_order': migration004(),
    '005_sessions_keys': migration005(),
    '006_user_name_claims': migration006(storage.hooks.name),
    '007_events': migration007(),
    '008_provisioning_tokens': migration008(),
    '009_schema_extensions': migration009(),
    '010_team_counters': migration010(),
    '011_feed_btrees': migration011(storage.hooks.name),
    '012_text_search': migration012(storage.hooks.name, (line) => process.stderr.write(`${line}\n`)),
    '013_feed_numbered_at_commit': migration013(storage.hooks.name),
    '014_user_name_order': migration014(storage.hooks.name),
    '015_feed_numbered_by_readers': migration015(storage.hooks.name),
    '016_team_limits': migration016(),
    '017_subscription_secret_index': migration017(),
    '018_subscription_creators': migration018(),
    '019_path_safe_schema_urns': migration019(),
    '020_client_secrets': migration020(),
    '021_client_assertions': migration021(),
    '022_webhook_subscriptions': migration022(),
    '023_roles_entitlements': migration023(storage.hooks.name),
    '024_async_requests': migration024(),
    '025_shared_signals': migration025(),
    '026_delta_query': migration026(),
    '027_connections': migration027(storage.hooks.name),
    '028_setup_links': migration028(),
    '029_second_factors': migration029(),
    '030_admin_password_links': migration030(),
    '032_accent_folded_search': migration032(storage.hooks.name),
    '033_console_indexes': migration033(storage.hooks.name),
    '034_member_search': migration034(storage.hooks.name),
  };
}

/**
 * Each migration first lifts the connection's statement deadline for the rest of the migrations'
 * transaction (PostgreSQL runs them in one): a migration takes as long as the data is large,
 * which the server's ceiling on statements (connect.ts `statementTimeoutMs`) does not foresee.
 */
export function migrationsWithoutDeadline(storage: Storage, migrations: Record<string, Migration>): Record<string, Migration> {
  if (storage.hooks.deadlineIn !== 'session') return migrations;
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration]) => [
      name,
      {
        ...migration,
        async up(db: Kysely<unknown>) {
          await storage.hooks.limitStatements(db, 0);
          await migration.up(db);
        },
      },
    ]),
  );
}

const LOOKUP_ATTEMPTS = 10;

/** PostgreSQL's invalid_schema_name: a schema named in the statement (or looked up by it) is gone. */
const schemaVanished = (error: unknown): boolean => typeof error === 'object' && error !== null && 'code' in error && error.code === '3F000';

/**
 * Runs a migrator's step (to the latest migration, or to one). Kysely's migrator looks its own tables up in the
 * catalog of every schema of the database (PostgresIntrospector.getTables), so another schema
 * dropped meanwhile (a neighbouring database's schema, a test's) fails the look-up with `schema
 * "<that one>" does not exist` before any migration runs. That is worth another try; each
 * migration is transactional.
 */
export async function migrateRetrying(step: () => Promise<MigrationResultSet>): Promise<MigrationResultSet> {
  let result = await step();
  for (let attempt = 1; result.error && schemaVanished(result.error) && attempt < LOOKUP_ATTEMPTS; attempt++) {
    await new Promise((r) => setTimeout(r, 20 * attempt));
    result = await step();
  }
  return result;
}

/** Applies every pending migration; throws with the failing migration's name and cause. */
export async function migrate(storage: Storage): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsWithoutDeadline(storage, migrationsFor(storage)) };
  // Kysely looks for its own tables in every schema unless told which one: name the schema the
  // connection works in, so databases in sibling schemas never mistake each other's tables.
  const migrationTableSchema =
    storage.hooks.name === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({ db: storage.db, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const result = await migrateRetrying(() => migrator.migrateToLatest());
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${result.error instanceof Error ? result.error.message : String(result.error)}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
