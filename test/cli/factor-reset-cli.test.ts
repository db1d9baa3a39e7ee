/**
 * `rollcall user reset-factors --team N --user-name U`, on every engine: the operator's way back in
 * for an admin who lost every second factor and every recovery code. It removes their passkeys,
 * authenticator app and recovery codes, ends their sessions, says what it removed, and is audited;
 * an unknown user is refused with a clear line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditEvents, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import { insertPasskey, replaceRecoveryCodes } from '../../src/storage/repos/factors.ts';
import { openSession } from '../../src/sessions.ts';
import { connect } from '../../src/storage/connect.ts';
import { NO_POSTGRES, processDatabases } from '../support/engines.ts';
import { rollcall, seedTeamToken } from '../support/processes.ts';

const ADMIN = 'lost@acme.example';

if (NO_POSTGRES) describe('rollcall user reset-factors on postgres', { skip: NO_POSTGRES }, () => {});

for (const target of processDatabases('rollcall-factor-reset')) {
  describe(`rollcall user reset-factors (${target.name})`, () => {
    let db: { url: string; dispose(): Promise<void> };
    before(async () => {
      db = await target.open();
      await seedTeamToken(db.url);
    });
    after(() => db.dispose());

    it("removes an admin's passkeys, authenticator app and recovery codes, ends their sessions, prints what it removed; audited", async () => {
      const storage = connect(db.url);
      try {
        const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
        const user = await createTeamUser(deps, 'acme', ADMIN, { password: 'correct horse battery staple', admin: true });
        const row = await storage.db.selectFrom('users').selectAll().where('id', '=', String(user.id)).executeTakeFirstOrThrow();
        const now = new Date().toISOString();
        for (const name of ['YubiKey', 'Laptop']) {
          await insertPasskey(storage.db, { id: newId(), team_id: row.team_id, user_id: row.id, credential_id: newId(), public_key: 'AAAA', counter: 0, transports: null, name, created_at: now, last_used_at: null });
        }
        await replaceRecoveryCodes(storage.db, [1, 2, 3].map((n) => ({ user_id: row.id, code_hash: `digest-${n}`, team_id: row.team_id, created_at: now, used_at: null })), row.id);
        await openSession({ storage, clock: systemClock }, 'console', row);

        const done = rollcall(['user', 'reset-factors', '--team', 'acme', '--user-name', ADMIN, '--database', db.url]);
        assert.equal(done.code, 0, done.stderr);
        assert.match(done.stdout, /second factors of "lost@acme\.example" reset: removed 2 passkeys and 3 unused recovery codes; 1 session\(s\) ended/);
        assert.equal((await storage.db.selectFrom('passkeys').select('id').where('user_id', '=', row.id).execute()).length, 0);
        assert.equal((await storage.db.selectFrom('recovery_codes').select('user_id').where('user_id', '=', row.id).execute()).length, 0);
        assert.equal((await storage.db.selectFrom('sessions').select('id_hash').where('user_id', '=', row.id).execute()).length, 0);
        const audit = (await auditEvents(deps, 'acme', undefined, 1000)).filter((a) => a.action === 'second_factors_reset');
        assert.equal(audit.length, 1);
        assert.deepEqual(audit[0]!.detail, { userName: ADMIN, passkeys: 2, totp: false, recoveryCodes: 3, sessionsEnded: 1 });
        assert.deepEqual(audit[0]!.actor, { via: 'cli', clientId: null, userId: null });

        const again = rollcall(['user', 'reset-factors', '--team', 'acme', '--user-name', ADMIN, '--database', db.url]);
        assert.equal(again.code, 0, again.stderr);
        assert.match(again.stdout, /removed no second factor; 0 session\(s\) ended/);
        const unknown = rollcall(['user', 'reset-factors', '--team', 'acme', '--user-name', 'nobody@acme.example', '--database', db.url]);
        assert.equal(unknown.code, 1);
        assert.match(unknown.stderr, /no user "nobody@acme\.example" in team "acme"/);
      } finally {
        await storage.close();
      }
    });
  });
}
