/**
 * `rollcall events ...` (issue 10 item 3): subscribe (push and poll), list, show, pause, resume,
 * replay and delete at the command line, with one clear line for bad input; each change audited.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall } from '../support/processes.ts';

describe('rollcall events', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-events-'));
    database = `sqlite:${join(dir, 'r.db')}`;
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('subscribe, list, pause, resume, replay, show, delete', () => {
    const created = rollcall(['events', 'subscribe', '--team', 'acme', '--url', 'https://receiver.example/events', '--events', 'create', 'delete', '--full', '--json', '--database', database]);
    assert.equal(created.code, 0, created.stderr);
    const sub = (JSON.parse(created.stdout) as { subscription: { id: string; events: string[]; full: boolean; state: string } }).subscription;
    assert.deepEqual(sub.events, ['create', 'delete']);
    assert.equal(sub.full, true);
    const id = sub.id;

    const list = rollcall(['events', 'list', '--team', 'acme', '--database', database]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${id}  push  https://receiver.example/events  active  cursor 0  events create,delete  full$`, 'm'));

    const paused = rollcall(['events', 'pause', id, '--team', 'acme', '--database', database]);
    assert.match(paused.stdout, /paused .*\(paused by an administrator\)/);
    assert.match(rollcall(['events', 'resume', id, '--team', 'acme', '--database', database]).stdout, / active /);

    const tooFar = rollcall(['events', 'replay', id, '--from', '5', '--team', 'acme', '--database', database]);
    assert.equal(tooFar.code, 1);
    assert.match(tooFar.stderr, /^rollcall: from 5 is past the end of the feed \(last seq 0\) \(invalidValue\)\n$/);
    assert.equal(rollcall(['events', 'replay', id, '--from', 'x', '--team', 'acme', '--database', database]).code, 1);

    const poll = rollcall(['events', 'subscribe', '--team', 'acme', '--poll', '--database', database]);
    assert.equal(poll.code, 0, poll.stderr);
    assert.match(poll.stdout, /poll token: rce_[A-Za-z0-9_-]{32}\n\(the token is shown only now\)/);

    const show = rollcall(['events', 'show', id, '--team', 'acme', '--json', '--database', database]);
    assert.deepEqual((JSON.parse(show.stdout) as { attempts: unknown[] }).attempts, []);

    assert.equal(rollcall(['events', 'delete', id, '--team', 'acme', '--database', database]).code, 0);
    const gone = rollcall(['events', 'show', id, '--team', 'acme', '--database', database]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^rollcall: Subscription .* not found\n$/);

    // Every change is in the audit trail as the CLI's; the refused replays left no row.
    const audit = rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]);
    assert.equal(audit.code, 0, audit.stderr);
    const rows = (JSON.parse(audit.stdout) as { action: string; resourceType: string; resourceId: string; actor: { via: string } }[]).filter((r) => r.resourceId === id);
    assert.deepEqual(rows.map((r) => [r.action, r.resourceType, r.actor.via]).sort(), [
      ['subscription_created', 'Subscription', 'cli'],
      ['subscription_deleted', 'Subscription', 'cli'],
      ['subscription_paused', 'Subscription', 'cli'],
      ['subscription_resumed', 'Subscription', 'cli'],
    ]);
  });

  it('refuses a plain-http receiver off loopback, a receiver on a link-local address, and an unknown team, with one line', () => {
    const http = rollcall(['events', 'subscribe', '--team', 'acme', '--url', 'http://receiver.example/events', '--database', database]);
    assert.equal(http.code, 1);
    assert.match(http.stderr, /^rollcall: the receiver must be https \(plain http only on a loopback address, for tests and local development\) \(invalidValue\)\n$/);
    const metadata = rollcall(['events', 'subscribe', '--team', 'acme', '--url', 'https://169.254.169.254/latest/meta-data/', '--database', database]);
    assert.equal(metadata.code, 1);
    assert.match(metadata.stderr, /^rollcall: 169\.254\.169\.254 is a link-local address: .*ALLOW_RECEIVERS\) \(invalidValue\)\n$/);
    const team = rollcall(['events', 'list', '--team', 'nope', '--database', database]);
    assert.equal(team.code, 1);
    assert.match(team.stderr, /^rollcall: .*nope/);
  });

  it('a loopback receiver only when ALLOW_RECEIVERS names it; a bad ALLOW_RECEIVERS stops the command with one line', () => {
    const args = ['events', 'subscribe', '--team', 'acme', '--url', 'http://127.0.0.1:9/events', '--database', database];
    const refused = rollcall(args);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^rollcall: 127\.0\.0\.1 is a loopback address: .* \(invalidValue\)\n$/);
    const allowed = rollcall(args, { ALLOW_RECEIVERS: '127.0.0.1:9' });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, / push {2}http:\/\/127\.0\.0\.1:9\/events {2}active /);
    const bad = rollcall(args, { ALLOW_RECEIVERS: '127.0.0.1, 10.0.0.0/33' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /ALLOW_RECEIVERS: expected addresses, CIDR ranges or host names, .*"10\.0\.0\.0\/33" is none of these/);
  });

  it("refuses a subscription over the team's subscriptions budget with one line (issue 27 item 2)", () => {
    assert.equal(rollcall(['team', 'create', '--name', 'capped', '--database', database]).code, 0);
    assert.equal(rollcall(['team', 'update', '--name', 'capped', '--limit', 'subscriptions=1', '--database', database]).code, 0);
    const first = rollcall(['events', 'subscribe', '--team', 'capped', '--url', 'https://receiver.example/one', '--database', database]);
    assert.equal(first.code, 0, first.stderr);
    const second = rollcall(['events', 'subscribe', '--team', 'capped', '--poll', '--database', database]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /^rollcall: the team holds 1 event subscriptions, its budget is 1: delete one first, or ask the operator to raise the subscriptions limit \(invalidValue\)\n$/);
    assert.equal(rollcall(['events', 'list', '--team', 'capped', '--database', database]).stdout.trim().split('\n').length, 1, 'nothing was created');
  });
});
