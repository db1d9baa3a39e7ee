/**
 * `node bench/search-depth.ts --database <db>`: the console's word searches one page deep into a
 * database loaded by `npm run bench:scale -- --keep`, where `bench:console` does not reach (it
 * follows one Next link from the first page): the page of 50 after user0900000, nine tenths of
 * the way through both the creation order and the userName order of the scale data set, read
 * through the list routine (repos/paging.ts listRows, the users' groups included as the console
 * asks) in creation order (`sortBy=created`, what a word search listed in before) and by userName
 * (its default now). Prints median and max of `--calls` calls (after two unmeasured ones).
 */
import { parseArgs } from 'node:util';
import { userWords } from '../src/console/directory.ts';
import { lowerFilter, lowerSort } from '../src/scim/filter/lower.ts';
import { parseListQuery } from '../src/scim/query.ts';
import { userResourceType } from '../src/scim/schema/registry.ts';
import { connect } from '../src/storage/connect.ts';
import { migrate } from '../src/storage/migrations/index.ts';
import { listRows } from '../src/storage/repos/paging.ts';
import { teamByName } from '../src/storage/repos/teams.ts';

const { values } = parseArgs({
  options: { database: { type: 'string' }, team: { type: 'string', default: 'scale' }, calls: { type: 'string', default: '12' }, after: { type: 'string', default: 'user0900000@scale.example' } },
});
if (!values.database) throw new Error('--database sqlite:<file> or postgres://... (a database loaded by npm run bench:scale -- --keep)');
const calls = Number(values.calls);
const WORDS = ['ada', 'lovelace', 'user05', 'user09', 'userext-0123456'];

const storage = connect(values.database);
await migrate(storage);
const team = await teamByName(storage.db, values.team);
if (!team) throw new Error(`no team "${values.team}" in the database`);
const from = await storage.db.selectFrom('users').select(['id', 'created_at', 'user_name_key']).where('team_id', '=', team.id).where('user_name_key', '=', values.after).executeTakeFirstOrThrow();

const lines = [`| word | order | median ms | max ms | rows |`, '|---|---|---:|---:|---:|'];
for (const q of WORDS) {
  for (const byUserName of [false, true]) {
    const query = parseListQuery(userResourceType, { filter: userWords(q), ...(byUserName ? { sortBy: 'userName' } : {}) });
    const window = {
      where: lowerFilter(query.filter!, { members: 'active' }),
      ...(byUserName ? { sort: lowerSort(query.sortBy!) } : {}),
      descending: false,
      onlyActive: true,
      withGroups: true,
      limit: 50,
      seek: { direction: 'after' as const, from: { ...(byUserName ? { key: from.user_name_key } : {}), createdAt: from.created_at, id: from.id } },
    };
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < calls + 2; i++) {
      const started = performance.now();
      rows = (await listRows(storage.db, 'users', team.id, window)).rows.length;
      if (i >= 2) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    lines.push(`| ${q} | ${byUserName ? 'userName' : 'creation'} | ${times[Math.floor(times.length / 2)]!.toFixed(1)} | ${times.at(-1)!.toFixed(1)} | ${rows} |`);
  }
}
process.stdout.write(`page of 50 after ${values.after}\n\n${lines.join('\n')}\n`);
await storage.close();
