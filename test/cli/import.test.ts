/**
 * `rollcall import` as an operator runs it (issue 32 item 7), on every engine: users and groups
 * from CSV (RFC 4180 quoting: commas, doubled quotes and line breaks inside quotes, a BOM, CRLF)
 * and JSONL into a team through in-process Bulk requests; upsert by userName / displayName, so
 * a second run, or a run after an interrupted one (the first half; a SIGKILL in the second
 * batch), updates or leaves alone and never duplicates;
 * a group's members named by userName; refused rows in the refused file with their line and SCIM
 * error, the import going on; the summary and the exit codes (0, 1 refused rows, 2 bad file or
 * option, 3 the server failed); progress lines per thousand rows when stderr is no terminal; 2,500
 * rows in batches; a broken record or a database failure after the first batch stops the run,
 * naming the first line not imported, and a run again finishes it without duplicates.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { connect } from '../../src/storage/connect.ts';
import { TEST_SECRET_KEY } from '../support/app.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall, TEST_PUBLIC_BASE_URL } from '../support/processes.ts';

const CLI = join(import.meta.dirname, '../../src/cli/index.ts');

/** Starts `rollcall import` and SIGKILLs it once it reports its first thousand rows (its second Bulk then under way); resolves when it has died. */
function importKilledAfterFirstBatch(args: readonly string[]): Promise<{ signal: NodeJS.Signals | null; stderr: string }> {
  const env = { ...process.env, LOG_LEVEL: 'silent', ...(args.some((a) => a.startsWith('postgres')) ? { SECRET_KEY: TEST_SECRET_KEY, PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL } : {}) };
  const child = spawn(process.execPath, [CLI, 'import', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.includes('import: 1000 rows')) child.kill('SIGKILL');
  });
  return new Promise((done) => child.once('exit', (_code, signal) => done({ signal, stderr })));
}

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const databases: { name: string; open(dir: string): Promise<{ url: string; drop(): Promise<void> }> }[] = [
  { name: 'sqlite', open: async (dir) => ({ url: `sqlite:${join(dir, 'import.db')}`, drop: async () => {} }) },
  ...(postgresUrl ? [{ name: 'postgres', open: async () => createPgSchema(postgresUrl!) }] : []),
];

/** The summary line's four counts. */
function counts(stdout: string): { created: number; updated: number; unchanged: number; refused: number } {
  const m = /^created (\d+), updated (\d+), unchanged (\d+), refused (\d+)$/m.exec(stdout);
  assert.ok(m, `no summary line in: ${stdout}`);
  return { created: Number(m[1]), updated: Number(m[2]), unchanged: Number(m[3]), refused: Number(m[4]) };
}

const refusedLines = (path: string): { line: number; row: unknown; status: number; scimType?: string; detail: string }[] =>
  readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

for (const engine of databases) {
  describe(`rollcall import (${engine.name})`, () => {
    let dir: string;
    let database: string;
    let drop: () => Promise<void>;
    const run = (args: string[]) => rollcall([...args, '--database', database]);
    const file = (name: string, text: string): string => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    /** The team's users (visible), by userName, through `user list` (no SQL in the test). */
    const users = (team: string): Map<string, Record<string, unknown>> => {
      const out = run(['user', 'list', '--team', team, '--count', '1000', '--json']);
      assert.equal(out.code, 0, out.stderr);
      const page = JSON.parse(out.stdout) as { total: number; users: { userName: string }[] };
      return new Map(page.users.map((u) => [u.userName, u]));
    };
    /** A user's stored document, read straight from the database. */
    const storedUser = async (userName: string): Promise<Record<string, unknown>> => {
      const storage = connect(database);
      try {
        const row = await storage.db.selectFrom('users').select('data').where('user_name', '=', userName).executeTakeFirstOrThrow();
        return storage.hooks.parseJson(row.data) as Record<string, unknown>;
      } finally {
        await storage.close();
      }
    };
    const total = (team: string): number => {
      const out = run(['user', 'list', '--team', team, '--count', '1', '--json']);
      return (JSON.parse(out.stdout) as { total: number }).total;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rollcall-import-'));
      const opened = await engine.open(dir);
      database = opened.url;
      drop = opened.drop;
      for (const name of ['acme', 'bulk', 'half']) assert.equal(run(['team', 'create', '--name', name]).code, 0);
    });
    after(async () => {
      await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('imports a CSV with RFC 4180 quoting (BOM, CRLF, commas, doubled quotes, line breaks), refuses bad rows with their line and goes on; a second run changes nothing', async () => {
      const csv = file(
        'users.csv',
        '\uFEFFuserName,givenName,familyName,displayName,email,phone,title,active,externalId,' + `${ENTERPRISE}:department\r\n` +
          'ann@example.com,Ann,"Smith, Jr.","Ann ""The Boss"" Smith",ann@example.com,+1 555 0100,"Head of\r\nSales",true,e-1,Sales\r\n' +
          'bob@example.com,Bob,Jones,,,,,,e-2,\r\n' +
          ',Nobody,Here,,,,,,,\r\n' +
          'carl@example.com,Carl,"un"closed,,,,,,,\r\n' +
          'dora@example.com,Dora,,,,,,maybe,,\r\n' +
          'eve@example.com,Eve,,,,\r\n' +
          'ann@EXAMPLE.com,Ann,Twice,,,,,,,\r\n' +
          'fay@example.com,Fay,,,not-an-email,,,,,\r\n',
      );
      const first = run(['import', '--team', 'acme', csv]);
      assert.equal(first.code, 1, first.stderr);
      assert.deepEqual(counts(first.stdout), { created: 3, updated: 0, unchanged: 0, refused: 5 });
      const refused = refusedLines(`${csv}.refused.jsonl`);
      assert.deepEqual(refused.map((r) => [r.line, r.status, r.scimType]), [
        // Ann's title holds a line break: the rows after it start a line later.
        [5, 400, 'invalidValue'],
        [6, 400, 'invalidSyntax'],
        [7, 400, 'invalidValue'],
        [8, 400, 'invalidSyntax'],
        [9, 409, 'uniqueness'],
      ]);
      assert.match(refused[0]!.detail, /userName is empty/);
      assert.match(refused[1]!.detail, /text after the closing quote/);
      assert.match(refused[2]!.detail, /active is "maybe"/);
      assert.match(refused[3]!.detail, /the row has 6 fields; the header has 10/);
      assert.match(refused[4]!.detail, /already on line 2 of this file/);
      assert.deepEqual(refused[2]!.row, { userName: 'dora@example.com', givenName: 'Dora', familyName: '', displayName: '', email: '', phone: '', title: '', active: 'maybe', externalId: '', [`${ENTERPRISE}:department`]: '' });

      const ann = await storedUser('ann@example.com');
      assert.deepEqual(
        [ann.name, ann.displayName, ann.title, ann.emails, ann.phoneNumbers, ann.active, ann.externalId, ann[ENTERPRISE]],
        [{ givenName: 'Ann', familyName: 'Smith, Jr.' }, 'Ann "The Boss" Smith', 'Head of\r\nSales', [{ value: 'ann@example.com', type: 'work', primary: true }], [{ value: '+1 555 0100', type: 'work' }], true, 'e-1', { department: 'Sales' }],
      );
      const all = users('acme');
      assert.deepEqual([...all.keys()].sort(), ['ann@example.com', 'bob@example.com', 'fay@example.com']);

      // The second run: nothing new, nothing written; the refused rows are refused again.
      const second = run(['import', '--team', 'acme', csv]);
      assert.equal(second.code, 1, second.stderr);
      assert.deepEqual(counts(second.stdout), { created: 0, updated: 0, unchanged: 3, refused: 5 });
      assert.equal(total('acme'), 3);
    });

    it('updates what a changed file changes (the attributes it gives; the others stay), and exits 0 with no refused file when nothing is refused', async () => {
      const csv = file('users2.csv', `userName,title,${ENTERPRISE}:department\nann@example.com,CEO,\nbob@example.com,,Ops\ngus@example.com,Intern,R&D\n`);
      writeFileSync(`${csv}.refused.jsonl`, 'stale\n');
      const out = run(['import', '--team', 'acme', csv, '--json']);
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), { kind: 'users', rows: 3, created: 1, updated: 2, unchanged: 0, refused: 0 });
      assert.equal(existsSync(`${csv}.refused.jsonl`), false);
      const ann = await storedUser('ann@example.com');
      assert.deepEqual([ann.title, ann.name, ann.externalId, ann[ENTERPRISE]], ['CEO', { givenName: 'Ann', familyName: 'Smith, Jr.' }, 'e-1', { department: 'Sales' }]);
      const bob = await storedUser('bob@example.com');
      assert.deepEqual([bob.name, bob[ENTERPRISE]], [{ givenName: 'Bob', familyName: 'Jones' }, { department: 'Ops' }]);
      const again = run(['import', '--team', 'acme', csv]);
      assert.deepEqual(counts(again.stdout), { created: 0, updated: 0, unchanged: 3, refused: 0 });
    });

    it("reads the team's own extension columns by the attribute's type (integer, multi-valued with ;) and refuses a value of the wrong type", async () => {
      const badge = 'urn:example:params:scim:schemas:extension:Badge:2.0:User';
      const schema = file('badge.json', JSON.stringify({ id: badge, name: 'Badge', attributes: [{ name: 'badgeNumber', type: 'integer' }, { name: 'tags', type: 'string', multiValued: true }] }));
      assert.equal(run(['schema', 'add', '--team', 'acme', schema]).code, 0);
      const csv = file('badges.csv', `userName,${badge}:badgeNumber,${badge}:TAGS\nann@example.com,42,a; b;\nbob@example.com,forty,\n`);
      const out = run(['import', '--team', 'acme', csv]);
      assert.equal(out.code, 1, out.stderr);
      assert.deepEqual(counts(out.stdout), { created: 0, updated: 1, unchanged: 0, refused: 1 });
      assert.deepEqual((await storedUser('ann@example.com'))[badge], { badgeNumber: 42, tags: ['a', 'b'] });
      const [refused] = refusedLines(`${csv}.refused.jsonl`);
      assert.deepEqual([refused!.line, refused!.scimType], [3, 'invalidValue']);
      assert.match(refused!.detail, /badgeNumber is "forty"; write a whole number/);
      assert.deepEqual(counts(run(['import', '--team', 'acme', csv]).stdout), { created: 0, updated: 0, unchanged: 1, refused: 1 });
    });

    it('imports JSONL users and groups, members by userName or id, and a group file again leaves them unchanged', () => {
      const jsonl = file(
        'people.jsonl',
        [
          JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'hal@example.com', name: { givenName: 'Hal' }, emails: [{ value: 'hal@example.com', type: 'work' }], id: 'ignored', meta: { version: 'W/"9"' } }),
          '',
          JSON.stringify({ userName: 'ivy@example.com', active: true }),
          '{"userName": "broken"',
          JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Wrong kind' }),
        ].join('\n') + '\n',
      );
      const out = run(['import', '--team', 'acme', jsonl]);
      assert.equal(out.code, 1, out.stderr);
      assert.deepEqual(counts(out.stdout), { created: 2, updated: 0, unchanged: 0, refused: 2 });
      assert.deepEqual(refusedLines(`${jsonl}.refused.jsonl`).map((r) => [r.line, r.scimType]), [[4, 'invalidSyntax'], [5, 'invalidValue']]);

      const ivy = users('acme').get('ivy@example.com') as { id: string };
      const groupsCsv = file('groups.csv', 'displayName,externalId,members\nEngineering,g-1,hal@example.com;IVY@example.com\n"Sales, EMEA",g-2,ann@example.com\nGhosts,g-3,nobody@example.com\nEmpty,g-4,\n');
      const groups = run(['import', '--team', 'acme', groupsCsv]);
      assert.equal(groups.code, 1, groups.stderr);
      assert.deepEqual(counts(groups.stdout), { created: 3, updated: 0, unchanged: 0, refused: 1 });
      const ghost = refusedLines(`${groupsCsv}.refused.jsonl`);
      assert.deepEqual(ghost.map((r) => [r.line, r.status, r.scimType]), [[4, 400, 'invalidValue']]);
      assert.match(ghost[0]!.detail, /member "nobody@example.com" is not a user of the team/);
      const again = run(['import', '--team', 'acme', groupsCsv]);
      assert.deepEqual(counts(again.stdout), { created: 0, updated: 0, unchanged: 3, refused: 1 });

      // JSONL groups: a member by id, another by userName; the group exists, so its members are replaced.
      const groupsJsonl = file('groups.jsonl', `${JSON.stringify({ displayName: 'engineering', members: [{ value: ivy.id }, { display: 'gus@example.com' }] })}\n`);
      const replaced = run(['import', '--team', 'acme', groupsJsonl]);
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.deepEqual(counts(replaced.stdout), { created: 0, updated: 1, unchanged: 0, refused: 0 });
      const members = run(['user', 'list', '--team', 'acme', '--filter', 'groups.display eq "Engineering"', '--json']);
      assert.equal(members.code, 0, members.stderr);
      assert.deepEqual((JSON.parse(members.stdout).users as { userName: string }[]).map((u) => u.userName).sort(), ['gus@example.com', 'ivy@example.com']);
      assert.deepEqual(counts(run(['import', '--team', 'acme', groupsJsonl]).stdout), { created: 0, updated: 0, unchanged: 1, refused: 0 });
    });

    it('2,500 rows go in batches of 1,000 with a progress line per thousand; an interrupted import (the first half) run again whole creates no duplicates', () => {
      const rows = Array.from({ length: 2500 }, (_, i) => `user${String(i).padStart(4, '0')}@example.com,Given ${i},"Family, ${i}"`);
      const whole = file('many.csv', `userName,givenName,familyName\n${rows.join('\n')}\n`);
      const half = file('half.csv', `userName,givenName,familyName\n${rows.slice(0, 1250).join('\n')}\n`);

      const full = run(['import', '--team', 'bulk', whole]);
      assert.equal(full.code, 0, full.stderr);
      assert.deepEqual(counts(full.stdout), { created: 2500, updated: 0, unchanged: 0, refused: 0 });
      assert.deepEqual(full.stderr.trim().split('\n'), [
        'import: 1000 rows (created 1000, updated 0, unchanged 0, refused 0)',
        'import: 2000 rows (created 2000, updated 0, unchanged 0, refused 0)',
      ]);
      assert.equal(total('bulk'), 2500);

      assert.deepEqual(counts(run(['import', '--team', 'half', half]).stdout), { created: 1250, updated: 0, unchanged: 0, refused: 0 });
      const resumed = run(['import', '--team', 'half', whole]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(counts(resumed.stdout), { created: 1250, updated: 0, unchanged: 1250, refused: 0 });
      assert.equal(total('half'), 2500);
    });

    it('an import killed (SIGKILL) during its second batch, run again whole, creates exactly the missing users', async () => {
      assert.equal(run(['team', 'create', '--name', 'killed']).code, 0);
      const rows = Array.from({ length: 3000 }, (_, i) => `k${String(i).padStart(4, '0')}@example.com,K ${i}`);
      const whole = file('killed.csv', `userName,givenName\n${rows.join('\n')}\n`);
      const killed = await importKilledAfterFirstBatch(['--team', 'killed', whole, '--database', database]);
      assert.equal(killed.signal, 'SIGKILL', killed.stderr);
      const before = total('killed');
      assert.ok(before >= 1000 && before < 3000, `after the kill: ${before} users`);
      const again = run(['import', '--team', 'killed', whole]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(counts(again.stdout), { created: 3000 - before, updated: 0, unchanged: before, refused: 0 });
      assert.equal(total('killed'), 3000);
    });

    it('a record over 1 MiB (an unclosed quote) after the first batch: exit 2 naming the first line not imported; the rows before it exist', () => {
      assert.equal(run(['team', 'create', '--name', 'broken']).code, 0);
      // 1,000 rows fill the first batch exactly; the broken record on line 1002 comes right after it is sent.
      const rows = Array.from({ length: 1000 }, (_, i) => `b${String(i).padStart(4, '0')}@example.com,B ${i}`);
      const broken = file('broken.csv', `userName,givenName\n${rows.join('\n')}\nlost@example.com,"never closed ${'x'.repeat(1024 * 1024 + 10)}\n`);
      const out = run(['import', '--team', 'broken', broken]);
      assert.equal(out.code, 2, out.stderr);
      assert.match(out.stderr, /the record on line 1002 is longer than/);
      assert.match(out.stderr, /rows before line 1002 were imported; fix the file and run it again/);
      assert.doesNotMatch(out.stderr, /nothing was written/);
      const imported = users('broken');
      assert.equal(imported.size, 1000);
      assert.ok(imported.has('b0000@example.com') && imported.has('b0999@example.com'));
      assert.equal(imported.has('lost@example.com'), false);
    });

    it('a database failure in the second batch stops the run at once (the server failed, rows before its first line imported); a run again finishes without duplicates', async () => {
      assert.equal(run(['team', 'create', '--name', 'down']).code, 0);
      const rows = Array.from({ length: 1500 }, (_, i) => `d${String(i).padStart(4, '0')}@example.com,D ${i}`);
      const whole = file('down.csv', `userName,givenName\n${rows.join('\n')}\n`);
      const refusedPath = `${whole}.refused.jsonl`;
      // A trigger refuses the team's 1,001st user as a failing database would (no SCIM rule names
      // the error): the first batch commits, the second batch's first write fails.
      const storage = connect(database);
      const fail = 'injected failure: the database is gone';
      try {
        const team = await storage.db.selectFrom('teams').select('id').where('name', '=', 'down').executeTakeFirstOrThrow();
        if (storage.sqlitePath !== undefined) {
          await sql`create trigger down_fails before insert on users when new.team_id = ${sql.lit(team.id)} and (select count(*) from users where team_id = new.team_id) >= 1000 begin select raise(abort, ${sql.lit(fail)}); end`.execute(storage.db);
        } else {
          await sql`create function down_fails() returns trigger language plpgsql as $$ begin if (select count(*) from users where team_id = new.team_id) >= 1000 then raise exception ${sql.lit(fail)}; end if; return new; end $$`.execute(storage.db);
          await sql`create trigger down_fails before insert on users for each row when (new.team_id = ${sql.lit(team.id)}) execute function down_fails()`.execute(storage.db);
        }
      } finally {
        await storage.close();
      }
      const failed = run(['import', '--team', 'down', whole]);
      assert.equal(failed.code, 3, failed.stderr);
      assert.equal(
        failed.stderr.trim().split('\n').at(-1),
        `rollcall: the server failed: ${fail}; rows before line 1002 were imported; run it again once the server is back: imported rows are updated, not duplicated`,
      );
      assert.equal(failed.stdout, '');
      // Stopped at once: no refused file of 500s.
      assert.equal(existsSync(refusedPath), false);
      const back = connect(database);
      try {
        await sql`drop trigger down_fails${back.sqlitePath === undefined ? sql` on users` : sql``}`.execute(back.db);
      } finally {
        await back.close();
      }
      assert.equal(total('down'), 1000);
      assert.equal(users('down').has('d1000@example.com'), false);
      const again = run(['import', '--team', 'down', whole]);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(counts(again.stdout), { created: 500, updated: 0, unchanged: 1000, refused: 0 });
      assert.equal(total('down'), 1500);
    });

    it('refuses an unusable file or option with exit 2 and writes nothing', () => {
      const unknown = file('unknown.csv', 'userName,colour\nzed@example.com,blue\n');
      const bad = run(['import', '--team', 'acme', unknown]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /unknown column "colour"/);
      const ext = file('ext.csv', 'userName,urn:example:nothing:User:attr\nzed@example.com,x\n');
      assert.match(run(['import', '--team', 'acme', ext]).stderr, /is not an extension of the team's User resources/);
      assert.equal(run(['import', '--team', 'acme', join(dir, 'missing.csv')]).code, 2);
      assert.equal(run(['import', '--team', 'acme', file('people.txt', 'x')]).code, 2);
      assert.equal(run(['import', '--team', 'nobody', unknown]).code, 2);
      assert.equal(run(['import', unknown]).code, 2);
      assert.equal(run(['import', '--team', 'acme', '--kind', 'robots', unknown]).code, 2);
      assert.equal(run(['import', '--team', 'acme', file('empty.csv', '')]).code, 2);
      assert.equal(users('acme').has('zed@example.com'), false);
    });
  });
}
