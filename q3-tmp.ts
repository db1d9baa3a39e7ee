import { connect } from './src/storage/connect.ts';
import { listRows } from './src/storage/repos/paging.ts';
import { sql } from './node_modules/kysely/dist/index.js';
const s = connect(process.argv[2]!);
const team = (await sql<{ id: string }>`select id from teams where name = 'scale'`.execute(s.db)).rows[0]!.id;
for (const [op, v] of [['co', '77777'], ['co', '77777'], ['sw', 'user0123456'], ['sw', 'user0123'], ['ew', '77@scale.example'], ['co', 'user']] as const) {
  const t = performance.now();
  const page = await listRows(s.db, 'users', team, { where: { kind: 'text', scalar: { at: 'column', column: 'user_name', folded: 'user_name_key' }, op, value: v, folded: true }, onlyActive: true, descending: false, limit: 100, seek: { direction: 'after' } });
  console.log(op, v, page.rows.length, (performance.now() - t).toFixed(1), 'ms');
}
await s.close();
