/**
 * `rollcall events subscribe --format webhook` and `rollcall events rotate-secret` (issue 34
 * item 3): the whsec_ secret printed once, never by list or show; what the database holds is
 * sealed under the instance's master key (here the key file beside the SQLite database, which the
 * servers use too) and opens to the printed secret; rotation prints the new one and audits;
 * bad input is one line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { liveWebhookKeys, WEBHOOK_SECRETS } from '../../src/events/webhook-secrets.ts';
import { masterKey } from '../../src/keys/master.ts';
import { SecretBox } from '../../src/keys/sealed.ts';
import { connect } from '../../src/storage/connect.ts';
import { rollcall } from '../support/processes.ts';

describe('rollcall events with webhooks', () => {
  let dir: string;
  let file: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-webhooks-'));
    file = join(dir, 'r.db');
    database = `sqlite:${file}`;
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The HMAC keys the servers would sign with now, opened from the database with the key file's master key. */
  const storedKeys = async (id: string): Promise<Buffer[]> => {
    const storage = connect(database);
    try {
      const box = new SecretBox(masterKey({ secretKey: undefined, database: { engine: 'sqlite', sqlitePath: file } }), WEBHOOK_SECRETS);
      return await liveWebhookKeys(storage.db, box, id, new Date());
    } finally {
      await storage.close();
    }
  };

  it('subscribe --format webhook prints the secret once; list and show never; rotate-secret prints the new one, the old one still signing during the overlap; audited', async () => {
    const created = rollcall(['events', 'subscribe', '--team', 'acme', '--url', 'https://receiver.example/hooks', '--format', 'webhook', '--database', database]);
    assert.equal(created.code, 0, created.stderr);
    const secret = /^webhook secret: (whsec_[A-Za-z0-9+/]{43}=)$/m.exec(created.stdout)?.[1];
    assert.ok(secret, created.stdout);
    assert.match(created.stdout, /\(the secret is shown only now/);
    const id = created.stdout.split('  ')[0]!;
    assert.match(created.stdout, new RegExp(`^${id}  push  webhook  https://receiver.example/hooks  active`, 'm'));

    for (const args of [['events', 'list', '--team', 'acme'], ['events', 'show', id, '--team', 'acme'], ['events', 'list', '--team', 'acme', '--json'], ['events', 'show', id, '--team', 'acme', '--json']]) {
      const out = rollcall([...args, '--database', database]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout.includes(secret.slice(6)), false, `${args.join(' ')} does not print the secret`);
      assert.match(out.stdout, /webhook/);
    }
    assert.deepEqual(await storedKeys(id), [Buffer.from(secret.slice(6), 'base64')], 'the sealed secret opens, with the servers\' master key, to the one printed');

    const rotated = rollcall(['events', 'rotate-secret', id, '--overlap', '600', '--team', 'acme', '--database', database]);
    assert.equal(rotated.code, 0, rotated.stderr);
    const fresh = /^webhook secret: (whsec_\S+)$/m.exec(rotated.stdout)?.[1];
    assert.ok(fresh && fresh !== secret, rotated.stdout);
    assert.match(rotated.stdout, /\(the secret is shown only now; the previous one also signs until \d{4}-/);
    assert.deepEqual(await storedKeys(id), [Buffer.from(fresh.slice(6), 'base64'), Buffer.from(secret.slice(6), 'base64')], 'newest first, the previous one during the overlap');

    const audit = rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]);
    const rows = (JSON.parse(audit.stdout) as { action: string; resourceId: string; actor: { via: string } }[]).filter((r) => r.resourceId === id);
    assert.deepEqual(rows.map((r) => [r.action, r.actor.via]).sort(), [['subscription_created', 'cli'], ['subscription_secret_rotated', 'cli']]);
    assert.equal(audit.stdout.includes(fresh.slice(6)), false);
  });

  it('refuses an unknown format, a poll webhook, rotating a SET subscription and a bad overlap, with one line', () => {
    const bad = rollcall(['events', 'subscribe', '--team', 'acme', '--url', 'https://receiver.example/h', '--format', 'xml', '--database', database]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /"set" \(RFC 8935 SETs\) or "webhook"/);
    const poll = rollcall(['events', 'subscribe', '--team', 'acme', '--poll', '--format', 'webhook', '--database', database]);
    assert.equal(poll.code, 1);
    assert.match(poll.stderr, /^rollcall: .*format "webhook" is for push subscriptions only.* \(invalidValue\)\n$/);
    const set = rollcall(['events', 'subscribe', '--team', 'acme', '--url', 'https://receiver.example/sets', '--database', database]);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout.includes('webhook secret'), false);
    const setId = set.stdout.split('  ')[0]!;
    const rotate = rollcall(['events', 'rotate-secret', setId, '--team', 'acme', '--database', database]);
    assert.equal(rotate.code, 1);
    assert.match(rotate.stderr, /^rollcall: subscription .* sends SETs .*only a webhook subscription has a secret to rotate \(invalidValue\)\n$/);
    const overlap = rollcall(['events', 'rotate-secret', setId, '--overlap', '9999999', '--team', 'acme', '--database', database]);
    assert.equal(overlap.code, 1);
    assert.match(overlap.stderr, /from 0 to 604800/);
  });
});
