/**
 * Runs the whole suite with node's test runner: every *.test.ts under test/. Fails loudly when
 * REQUIRE_PG=1 and PostgreSQL does not answer, so CI never passes by skipping the database.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';

const url = process.env.TEST_DATABASE_URL;
if (process.env.REQUIRE_PG === '1') {
  if (!url) {
    console.error('REQUIRE_PG=1 but TEST_DATABASE_URL is not set');
    process.exit(1);
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    console.error(`REQUIRE_PG=1 but PostgreSQL at ${url} does not answer: ${(error as Error).message}`);
    process.exit(1);
  } finally {
    await client.end().catch(() => {});
  }
}

const patterns = process.argv.slice(2);
// test/support/preload.ts lowers the cost of new password hashes in every test process.
const args = ['--import', './test/support/preload.ts', '--test', '--test-reporter=spec', ...(patterns.length > 0 ? patterns : ['test/**/*.test.ts'])];
// Every test file runs in its own process, and the CLI tests start `rollcall` hundreds of times:
// node's compile cache (keyed by each file's content) lets them skip compiling what an earlier
// process compiled, which halves the start of each (docs/PERFORMANCE.md, "The suite's time").
const compileCache = process.env.NODE_COMPILE_CACHE ?? join(import.meta.dirname, '..', 'node_modules', '.cache', 'node-compile');
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, NODE_COMPILE_CACHE: compileCache } });
process.exit(result.status ?? 1);
