/**
 * `rollcall client secret add | list | revoke`, `client update` and `client create
 * --token-lifetime` as an operator runs them (DESIGN.md section 11; issue 29 items 1 and 2), on
 * an SQLite file and on PostgreSQL: a secret printed once with its id and expiry, listed without
 * its value, at most five live, revoked by id; clear refusals with a non-zero exit for unknown
 * clients and secrets and for values out of range; `rotate-secret --help` says what it revokes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPgSchema, NO_POSTGRES, postgresUrl } from '../support/engines.ts';
import { rollcall } from '../support/processes.ts';

interface Target {
  readonly name: string;
  readonly skip: string | false;
  open(): Promise<{ database: string; dispose(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: 'an SQLite file',
    skip: false,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'rollcall-secrets-cli-'));
      return { database: `sqlite:${join(dir, 'secrets.db')}`, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL',
    skip: postgresUrl ? false : NO_POSTGRES,
    async open() {
      const schema = await createPgSchema(postgresUrl!);
      return { database: schema.url, dispose: () => schema.drop() };
    },
  },
];

for (const target of targets) {
  describe(`rollcall client secret on ${target.name}`, { skip: target.skip }, () => {
    let database: string;
    let dispose: () => Promise<void>;
    let clientId: string;
    let firstSecret: string;
    const run = (...args: string[]) => rollcall([...args, '--database', database]);
    const ok = (...args: string[]) => {
      const out = run(...args, '--json');
      assert.equal(out.code, 0, out.stderr);
      return JSON.parse(out.stdout) as Record<string, unknown> & Record<string, unknown>[];
    };

    before(async () => {
      ({ database, dispose } = await target.open());
      assert.equal(run('team', 'create', '--name', 'acme').code, 0);
      const created = ok('client', 'create', '--name', 'Entra', '--team', 'acme', '--token-lifetime', '5400');
      clientId = String(created.clientId);
      firstSecret = String(created.clientSecret);
      assert.equal(created.tokenLifetime, 5400);
      assert.match(String(created.secretExpiresAt), /^\d{4}-\d\d-\d\dT/);
    });
    after(() => dispose?.());

    it('secret add prints id, clientSecret and expiresAt once; list shows every secret without its value', () => {
      const added = ok('client', 'secret', 'add', '--client', clientId, '--name', 'rotation 2027', '--expires-in', '365');
      assert.match(String(added.id), /^[A-Z0-9]{20}$/);
      assert.match(String(added.clientSecret), /^rc_cs_[A-Za-z0-9_-]{43}$/);
      assert.equal(Date.parse(String(added.expiresAt)) - Date.parse(String(added.createdAt)), 365 * 86_400_000);

      const human = run('client', 'secret', 'add', '--client', clientId);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /^id: +[A-Z0-9]{20}$/m);
      assert.match(human.stdout, /^clientSecret: +rc_cs_/m);
      assert.match(human.stdout, /^expiresAt: +\d{4}-/m);
      const humanSecret = /clientSecret: +(\S+)/.exec(human.stdout)![1]!;

      const listed = run('client', 'secret', 'list', '--client', clientId, '--json');
      assert.equal(listed.code, 0, listed.stderr);
      const rows = JSON.parse(listed.stdout) as { id: string; name: string; createdAt: string; expiresAt: string; lastUsedAt: string | null }[];
      assert.deepEqual(rows.map((r) => r.name).slice(0, 2), ['initial', 'rotation 2027']);
      assert.equal(rows.length, 3);
      for (const row of rows) assert.deepEqual(Object.keys(row).sort(), ['createdAt', 'expired', 'expiresAt', 'id', 'lastUsedAt', 'name']);
      for (const secret of [firstSecret, String(added.clientSecret), humanSecret]) assert.ok(!listed.stdout.includes(secret) && !run('client', 'secret', 'list', '--client', clientId).stdout.includes(secret));
    });

    it('a sixth live secret is refused with a clear message; revoking one makes room', () => {
      const before = (ok('client', 'secret', 'list', '--client', clientId) as unknown as { id: string }[]).length;
      for (let i = before; i < 5; i++) ok('client', 'secret', 'add', '--client', clientId, '--name', `extra ${i}`);
      const sixth = run('client', 'secret', 'add', '--client', clientId, '--name', 'sixth');
      assert.notEqual(sixth.code, 0);
      assert.match(sixth.stderr, /already has 5 live secrets.*revoke one first/);
      const rows = ok('client', 'secret', 'list', '--client', clientId) as unknown as { id: string; name: string }[];
      const revoked = ok('client', 'secret', 'revoke', '--client', clientId, '--id', rows[0]!.id);
      assert.equal(revoked.id, rows[0]!.id);
      assert.equal(revoked.tokensRevoked, 0);
      ok('client', 'secret', 'add', '--client', clientId, '--name', 'sixth');
      const again = run('client', 'secret', 'revoke', '--client', clientId, '--id', rows[0]!.id);
      assert.notEqual(again.code, 0);
      assert.match(again.stderr, /already revoked/);
    });

    it('unknown clients and secrets, and values out of range, are refused with a non-zero exit', () => {
      const cases: [string[], RegExp][] = [
        [['client', 'secret', 'add', '--client', 'NOSUCHCLIENT00000000'], /no client with id "NOSUCHCLIENT00000000"/],
        [['client', 'secret', 'list', '--client', 'NOSUCHCLIENT00000000'], /no client with id/],
        [['client', 'secret', 'revoke', '--client', clientId, '--id', 'NOSUCHSECRET00000000'], /has no secret with id "NOSUCHSECRET00000000"/],
        [['client', 'secret', 'add', '--client', clientId, '--expires-in', '1096'], /whole number of days from 1 to 1095/],
        [['client', 'secret', 'add', '--client', clientId, '--expires-in', '0'], /whole number of days from 1 to 1095/],
        [['client', 'secret', 'add', '--client', clientId, '--expires-in', '2y'], /whole number of days/],
        [['client', 'update', '--client', clientId, '--token-lifetime', '299'], /300 to 86400/],
        [['client', 'update', '--client', clientId, '--token-lifetime', '86401'], /300 to 86400/],
        [['client', 'update', '--client', clientId], /nothing to change/],
        [['client', 'update', '--client', 'NOSUCHCLIENT00000000', '--name', 'x'], /no client with id/],
        [['client', 'create', '--name', 'x', '--team', 'acme', '--token-lifetime', '100'], /300 to 86400/],
      ];
      for (const [args, message] of cases) {
        const out = run(...args);
        assert.notEqual(out.code, 0, args.join(' '));
        assert.match(out.stderr, message, args.join(' '));
      }
    });

    it('client update changes the name and the token lifetime, audited', () => {
      const updated = ok('client', 'update', '--client', clientId, '--token-lifetime', '7200', '--name', 'Entra ID');
      assert.deepEqual(updated, { clientId, name: 'Entra ID', tokenLifetime: 7200 });
      const listed = ok('client', 'list') as unknown as { clientId: string; tokenLifetime: number }[];
      assert.equal(listed.find((c) => c.clientId === clientId)?.tokenLifetime, 7200);
      const audit = run('audit', 'list', '--team', 'acme', '--json');
      assert.equal(audit.code, 0, audit.stderr);
      for (const action of ['client_created', 'client_secret_added', 'client_secret_revoked', 'client_updated']) assert.ok(audit.stdout.includes(action), action);
    });

    it('rotate-secret says in --help that it revokes every other secret, and does', () => {
      const help = run('client', 'rotate-secret', '--help');
      assert.match(help.stdout.replace(/\s+/g, ' '), /revoke every other secret of the client/);
      const rotated = ok('client', 'rotate-secret', '--client-id', clientId);
      assert.equal(rotated.secretsRevoked, 5);
      const rows = ok('client', 'secret', 'list', '--client', clientId) as unknown as { id: string }[];
      assert.equal(rows.length, 1);
    });
  });
}
