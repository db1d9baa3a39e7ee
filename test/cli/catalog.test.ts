/**
 * `rollcall role | entitlement | catalog ...` as an operator runs them, on every engine (issue 31
 * item 1, DESIGN.md section 12): each command once, its human and JSON output, an unchanged add,
 * the refusals (bad value, unknown type, a held role without --force, a bad catalog file, the
 * budget) as one line naming what is wrong, and the audit rows the changes write as the CLI's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { contextFor, requireTeam } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { createUser } from '../../src/scim/users.ts';
import { connect } from '../../src/storage/connect.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall } from '../support/processes.ts';

const databases: { name: string; open(dir: string): Promise<{ url: string; drop(): Promise<void> }> }[] = [
  { name: 'sqlite', open: async (dir) => ({ url: `sqlite:${join(dir, 'catalog.db')}`, drop: async () => {} }) },
  ...(postgresUrl ? [{ name: 'postgres', open: async () => createPgSchema(postgresUrl!) }] : []),
];

for (const engine of databases) {
  describe(`rollcall role, entitlement and catalog (${engine.name})`, () => {
    let dir: string;
    let database: string;
    let drop: () => Promise<void>;
    const run = (args: string[]) => rollcall([...args, '--database', database]);
    const ok = (args: string[]) => {
      const out = run(args);
      assert.equal(out.code, 0, out.stderr);
      return out.stdout.trim();
    };
    const okJson = (args: string[]) => JSON.parse(ok([...args, '--json'])) as Record<string, unknown>;
    const refused = (args: string[], message: RegExp) => {
      const out = run(args);
      assert.equal(out.code, 1, out.stdout);
      assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
      assert.match(out.stderr.trim(), message);
    };
    /** Runs `work` on the database directly (the SCIM writes the CLI has no command for). */
    const direct = async <T>(work: (storage: ReturnType<typeof connect>) => Promise<T>): Promise<T> => {
      const storage = connect(database);
      try {
        return await work(storage);
      } finally {
        await storage.close();
      }
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rollcall-catalog-'));
      const opened = await engine.open(dir);
      database = opened.url;
      drop = opened.drop;
      assert.equal(run(['team', 'create', '--name', 'acme']).code, 0);
    });
    after(async () => {
      await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('role add | list | remove', () => {
      assert.equal(ok(['role', 'add', '--team', 'acme', '--value', 'admin', '--display-name', 'Administrator', '--description', 'Everything']), 'role admin added for team acme');
      assert.equal(ok(['role', 'add', '--team', 'acme', '--value', 'admin', '--display-name', 'Administrator', '--description', 'Everything']), 'role admin unchanged for team acme');
      assert.deepEqual(okJson(['role', 'add', '--team', 'acme', '--value', 'admin', '--display-name', 'Admin']), { role: { value: 'admin', displayName: 'Admin' }, outcome: 'updated' });
      ok(['role', 'add', '--team', 'acme', '--value', 'viewer', '--display-name', 'Viewer']);
      assert.equal(ok(['role', 'list', '--team', 'acme']), 'admin  Admin\nviewer  Viewer');
      assert.equal(ok(['role', 'remove', '--team', 'acme', '--value', 'viewer']), 'removed role viewer from team acme');
      assert.deepEqual(okJson(['role', 'list', '--team', 'acme']), [{ value: 'admin', displayName: 'Admin' }]);
      refused(['role', 'remove', '--team', 'acme', '--value', 'viewer'], /^rollcall: Team acme's catalog has no role "viewer"/);
      refused(['role', 'add', '--team', 'acme', '--value', ' padded', '--display-name', 'P'], /^rollcall: value: must not begin or end with whitespace .*\(invalidValue\)$/);
      refused(['role', 'add', '--team', 'nobody', '--value', 'x', '--display-name', 'X'], /no team named "nobody"/);
    });

    it('a held role is refused with the counts unless --force, which takes it from its holders', async () => {
      // Two users holding the role, written as a SCIM create writes them (their grants rows with them).
      await direct(async (storage) => {
        const deps = { storage, clock: systemClock, baseUrl: 'https://rollcall.test' };
        const ctx = await contextFor(deps, await requireTeam(deps, 'acme'));
        for (const userName of ['u1@acme.example', 'u2@acme.example']) await createUser(ctx, { schemas: [USER_SCHEMA], userName, roles: [{ value: 'admin' }] });
      });
      refused(['role', 'remove', '--team', 'acme', '--value', 'admin'], /^rollcall: role "admin" is held by 2 users; run again with --force to remove it from them$/);
      assert.equal(ok(['role', 'remove', '--team', 'acme', '--value', 'admin', '--force']), 'removed role admin from team acme; taken from 2 user(s), 0 group mapping(s) deleted');
      assert.equal(ok(['role', 'list', '--team', 'acme']), 'no roles');
      const left = await direct((storage) => storage.db.selectFrom('user_grants').selectAll().execute());
      assert.equal(left.length, 0);
    });

    it('entitlement type add | list | remove, entitlement add | list | remove', () => {
      refused(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'License', '--endpoint', '/Licenses', '--required'], /License is required but has no entitlements/);
      assert.equal(ok(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'License', '--endpoint', '/Licenses', '--single-valued']), 'entitlement type License at /Licenses added for team acme');
      ok(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'Permission set', '--endpoint', '/PermissionSets', '--description', 'AWS']);
      refused(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'Seat', '--endpoint', '/Seats', '--single-valued', '--multi-valued'], /exclude each other/);
      refused(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'Seat', '--endpoint', '/licenses'], /endpoint: "\/licenses" is already the endpoint of entitlement type License/);
      refused(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'User', '--endpoint', '/People'], /name: "User" is a SCIM resource type Rollcall serves/);
      assert.equal(ok(['entitlement', 'add', '--team', 'acme', '--type', 'license', '--value', 'e5', '--display-name', 'Office E5']), 'entitlement e5 of type License added for team acme');
      assert.equal(ok(['entitlement', 'type', 'add', '--team', 'acme', '--name', 'License', '--endpoint', '/Licenses', '--required', '--single-valued']), 'entitlement type License at /Licenses updated for team acme');
      ok(['entitlement', 'add', '--team', 'acme', '--type', 'Permission set', '--value', 'ps-admin', '--display-name', 'Admin access']);
      refused(['entitlement', 'add', '--team', 'acme', '--type', 'Seat', '--value', 'x', '--display-name', 'X'], /no entitlement type "Seat" \(its types: License, Permission set\)/);
      assert.equal(
        ok(['entitlement', 'type', 'list', '--team', 'acme']),
        'License  /Licenses  required  single-valued  1 entitlement(s)\nPermission set  /PermissionSets  optional  multi-valued  1 entitlement(s)  (AWS)',
      );
      assert.equal(ok(['entitlement', 'list', '--team', 'acme']), 'License  e5  Office E5\nPermission set  ps-admin  Admin access');
      assert.equal(ok(['entitlement', 'list', '--team', 'acme', '--type', 'LICENSE']), 'License  e5  Office E5');
      refused(['entitlement', 'remove', '--team', 'acme', '--type', 'License', '--value', 'ps-admin'], /has no entitlement "ps-admin" \(it belongs to Permission set\)/);
      assert.equal(ok(['entitlement', 'remove', '--team', 'acme', '--type', 'Permission set', '--value', 'ps-admin']), 'removed entitlement ps-admin from team acme');
      assert.equal(ok(['entitlement', 'type', 'remove', '--team', 'acme', '--name', 'permission set']), 'removed entitlement type Permission set and its 0 entitlement(s) from team acme');
      assert.equal(ok(['entitlement', 'type', 'list', '--team', 'acme']), 'License  /Licenses  required  single-valued  1 entitlement(s)');
    });

    it('catalog show | put | schemas; a bad file and the budget refused in one line; the changes audited as the CLI', async () => {
      const shown = okJson(['catalog', 'show', '--team', 'acme']);
      assert.deepEqual(shown, { schemas: 'okta', roles: [], entitlementTypes: [{ name: 'License', endpoint: '/Licenses', required: true, multiValued: false, entitlements: [{ value: 'e5', displayName: 'Office E5' }] }] });
      const file = join(dir, 'catalog.json');
      writeFileSync(file, JSON.stringify({ ...shown, roles: [{ value: 'admin', displayName: 'Administrator' }] }));
      assert.equal(ok(['catalog', 'put', '--team', 'acme', '--file', file]), 'catalog of team acme: 1 added, 0 updated, 0 removed');
      assert.equal(ok(['catalog', 'put', '--team', 'acme', '--file', file]), 'catalog of team acme: 0 added, 0 updated, 0 removed');
      writeFileSync(file, JSON.stringify({ roles: [{ value: 'admin' }] }));
      refused(['catalog', 'put', '--team', 'acme', '--file', file], /^rollcall: roles\[0\]\.displayName: is required/);
      writeFileSync(file, '{"roles": [');
      refused(['catalog', 'put', '--team', 'acme', '--file', file], /is not JSON/);
      assert.equal(run(['team', 'update', '--name', 'acme', '--limit', 'catalog.entries=3']).code, 0);
      writeFileSync(file, JSON.stringify({ ...shown, roles: [{ value: 'a', displayName: 'A' }, { value: 'b', displayName: 'B' }] }));
      refused(['catalog', 'put', '--team', 'acme', '--file', file], /^rollcall: Team acme would have 4 roles, entitlement types and entitlements in its catalog; its budget "catalog\.entries" is 3 \(invalidValue\)$/);
      assert.equal(ok(['catalog', 'schemas', '--team', 'acme', 'ietf']), "team acme's catalog discovery shows the ietf schemas");
      assert.equal(ok(['catalog', 'schemas', '--team', 'acme', 'ietf']), "team acme's catalog discovery shows the ietf schemas (unchanged)");
      refused(['catalog', 'schemas', '--team', 'acme', 'scim'], /schemas: must be one of okta, ietf/);
      const audit = await direct((storage) => storage.db.selectFrom('audit_events').select(['action', 'actor']).where('action', 'in', ['role_added', 'role_removed', 'catalog_replaced', 'catalog_schemas_set', 'entitlement_type_removed']).execute());
      assert.deepEqual([...new Set(audit.map((a) => a.action))].sort(), ['catalog_replaced', 'catalog_schemas_set', 'entitlement_type_removed', 'role_added', 'role_removed']);
      assert.ok(audit.every((a) => JSON.parse(a.actor).via === 'cli'));
    });
  });
}
