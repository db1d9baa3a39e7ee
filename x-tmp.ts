import { connect } from './src/storage/connect.ts';
import { indexNames } from './src/storage/dialect.ts';
import { rebuildExtensionIndexes } from './src/scim/team-schemas.ts';
import { sql } from './node_modules/kysely/dist/index.js';
const s = connect(process.argv[2]!);
if (process.argv[3] === 'drop') {
  for (const n of (await indexNames(s.db, s.hooks.name, 'users')).filter((n) => n.startsWith('rc_x_'))) { await sql`drop index ${sql.id(n)}`.execute(s.db); console.log('dropped', n); }
} else {
  const t = performance.now();
  await rebuildExtensionIndexes(s);
  console.log('rebuilt in', ((performance.now() - t) / 1000).toFixed(1), 's', (await indexNames(s.db, s.hooks.name, 'users')).filter((n) => n.startsWith('rc_x_')));
}
await s.close();
