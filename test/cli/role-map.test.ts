/**
 * `rollcall role map | unmap | mappings` as an operator runs them (issue 31 item 4), on every
 * engine: a group of the team mapped to a role (`--role`) or an entitlement (`--entitlement
 * TYPE:VALUE`) of its catalog, idempotently; listed with the group's and the entry's names, all
 * or one group's; unmapped; a value outside the catalog, an unknown group and bad flags refused
 * with one line; each change one event in the team's feed. (The HTTP side:
 * test/http/access-mappings.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/storage/connect.ts';
import { insertGroup } from '../../src/storage/repos/groups.ts';
import { seedCatalog } from '../support/catalog.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall } from '../support/processes.ts';
import { groupRow } from '../support/rows.ts';

const databases: { name: string; open(dir: string): Promise<{ url: string; drop(): Promise<void> }> }[] = [
  { name: 'sqlite', open: async (dir) => ({ url: `sqlite:${join(dir, 'roles.db')}`, drop: async () => {} }) },
  ...(postgresUrl ? [{ name: 'postgres', open: async () => createPgSchema(postgresUrl!) }] : []),
];

for (const engine of databases) {
  describe(`rollcall role map, unmap and mappings (${engine.name})`, () => {
    let dir: string;
    let database: string;
    let drop: () => Promise<void>;
    let admins: string;
    let teamId: string;
    const run = (args: string[]) => rollcall([...args, '--database', database]);
    const ok = (args: string[]) => {
      const out = run(args);
      assert.equal(out.code, 0, out.stderr);
      return out.stdout;
    };
    const refused = (args: string[], message: RegExp) => {
      const out = run(args);
      assert.equal(out.code, 1, out.stdout);
      assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
      assert.match(out.stderr, message);
    };
    /** The team's feed events on Roles and Entitlements, as [type, resource, id, members]. */
    const mappingEvents = async () => {
      const storage = connect(database);
      try {
        const rows = await storage.db.selectFrom('events').select(['type', 'resource_type', 'resource_id', 'members']).where('team_id', '=', teamId).where('resource_type', 'in', ['Role', 'Entitlement']).orderBy('at').execute();
        return rows.map((r) => [r.type, r.resource_type, r.resource_id, JSON.parse(r.members ?? 'null')]);
      } finally {
        await storage.close();
      }
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rollcall-role-map-'));
      const opened = await engine.open(dir);
      database = opened.url;
      drop = opened.drop;
      assert.equal(run(['team', 'create', '--name', 'acme']).code, 0);
      const storage = connect(database);
      try {
        teamId = (await storage.db.selectFrom('teams').select('id').where('name_key', '=', 'acme').executeTakeFirstOrThrow()).id;
        await seedCatalog(storage, teamId, {
          roles: [{ value: 'admin', displayName: 'Administrator' }, { value: 'viewer' }],
          types: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5', displayName: 'Office E5' }] }],
        });
        const row = groupRow(teamId, 'Admins');
        await insertGroup(storage.db, row);
        admins = row.id;
      } finally {
        await storage.close();
      }
    });
    after(async () => {
      await drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('maps a group to a role and an entitlement, idempotently, and lists them', async () => {
      assert.equal(ok(['role', 'map', '--team', 'acme', '--group', admins, '--role', 'admin']).trim(), `mapped group Admins (${admins}) to role admin for team acme`);
      assert.equal(ok(['role', 'map', '--team', 'acme', '--group', admins, '--role', 'admin']).trim(), `already mapped: group Admins (${admins}) to role admin for team acme`);
      const again = JSON.parse(ok(['role', 'map', '--team', 'acme', '--group', admins, '--role', 'admin', '--json']));
      assert.equal(again.created, false);
      const entitlement = JSON.parse(ok(['role', 'map', '--team', 'acme', '--group', admins, '--entitlement', 'License:e5', '--json']));
      assert.deepEqual({ ...entitlement, created: true }, { group: { id: admins, displayName: 'Admins' }, kind: 'entitlement', type: 'License', value: 'e5', display: 'Office E5', created: true });

      const listed = ok(['role', 'mappings', '--team', 'acme']).trim().split('\n');
      assert.equal(listed.length, 2);
      assert.match(listed[0]!, new RegExp(`^${admins}  Admins  role admin \\(Administrator\\)  mapped \\d{4}-`));
      assert.match(listed[1]!, new RegExp(`^${admins}  Admins  entitlement License:e5 \\(Office E5\\)  mapped \\d{4}-`));
      const own = JSON.parse(ok(['role', 'mappings', '--team', 'acme', '--group', admins, '--json'])) as { value: string }[];
      assert.deepEqual(own.map((m) => m.value), ['admin', 'e5']);
      assert.deepEqual(await mappingEvents(), [['patch', 'Role', 'admin', { added: [admins] }], ['patch', 'Entitlement', 'e5', { added: [admins] }]]);
    });

    it('refuses a value outside the catalog, an unknown group and bad flags with one line', () => {
      refused(['role', 'map', '--team', 'acme', '--group', admins, '--role', 'superuser'], /"superuser" is not a role in the team's catalog \(admin, viewer\) \(invalidValue\)/);
      refused(['role', 'map', '--team', 'acme', '--group', admins, '--entitlement', 'Seat:e5'], /"Seat" is not an entitlement type in the team's catalog \(License\)/);
      refused(['role', 'map', '--team', 'acme', '--group', 'NOSUCHGROUP', '--role', 'admin'], /Group NOSUCHGROUP not found/);
      refused(['role', 'map', '--team', 'acme', '--group', admins], /give exactly one of --role VALUE and --entitlement TYPE:VALUE/);
      refused(['role', 'map', '--team', 'acme', '--group', admins, '--role', 'admin', '--entitlement', 'License:e5'], /give exactly one/);
      // A malformed flag is commander's refusal (with the command's help after it).
      const malformed = run(['role', 'map', '--team', 'acme', '--group', admins, '--entitlement', 'e5']);
      assert.equal(malformed.code, 1);
      assert.match(malformed.stderr, /--entitlement takes TYPE:VALUE, e\.g\. License:e5/);
      refused(['role', 'mappings', '--team', 'acme', '--group', 'NOSUCHGROUP'], /Group NOSUCHGROUP not found/);
      refused(['role', 'mappings', '--team', 'nobody'], /no team named "nobody"/);
    });

    it('unmaps, with one event; unmapping again is refused', async () => {
      assert.equal(ok(['role', 'unmap', '--team', 'acme', '--group', admins, '--role', 'admin']).trim(), `unmapped group Admins (${admins}) from role admin for team acme`);
      refused(['role', 'unmap', '--team', 'acme', '--group', admins, '--role', 'admin'], new RegExp(`Group ${admins} is not mapped to the role "admin"`));
      assert.deepEqual((await mappingEvents()).at(-1), ['patch', 'Role', 'admin', { removed: [admins] }]);
      assert.match(ok(['role', 'mappings', '--team', 'acme']).trim(), /^\S+  Admins  entitlement License:e5 \(Office E5\)  mapped \S+$/);
      ok(['role', 'unmap', '--team', 'acme', '--group', admins, '--entitlement', 'License:e5']);
      assert.equal(ok(['role', 'mappings', '--team', 'acme']).trim(), 'no group mappings');
    });
  });
}
