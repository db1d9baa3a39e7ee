/**
 * Team budgets at the command line (src/budgets.ts): `team update --limit NAME=VALUE` sets a
 * budget for one team (audited), `NAME=default` restores it, a wrong name or value is refused
 * with a line naming what the limit takes, and `team show` lists every budget with the
 * overridden ones marked.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BUDGETS } from '../../src/budgets.ts';
import { rollcall } from '../support/processes.ts';

describe('rollcall team update --limit and team show', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-team-limits-'));
    database = `sqlite:${join(dir, 'r.db')}`;
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
    assert.equal(rollcall(['team', 'create', '--name', 'other', '--database', database]).code, 0);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const show = (team: string) => {
    const out = rollcall(['team', 'show', '--name', team, '--json', '--database', database]);
    assert.equal(out.code, 0, out.stderr);
    return JSON.parse(out.stdout) as { name: string; limits: { name: string; value: number; default: number; overridden: boolean }[] };
  };
  const limit = (team: string, name: string) => show(team).limits.find((l) => l.name === name);

  it('shows every budget at its default on a new team', () => {
    const shown = show('acme');
    assert.deepEqual(
      shown.limits.map((l) => l.name),
      Object.keys(BUDGETS),
    );
    assert.ok(shown.limits.every((l) => !l.overridden && l.value === l.default));
    const text = rollcall(['team', 'show', '--name', 'acme', '--database', database]);
    assert.match(text.stdout, new RegExp(`filter\\.cost\\s+${BUDGETS['filter.cost'].default} row evaluations`));
  });

  it('sets budgets for one team only, and restores a default', () => {
    const set = rollcall(['team', 'update', '--name', 'acme', '--limit', 'subscriptions=3', '--limit', 'statement.ms=1500', '--database', database]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /subscriptions = 3/);
    assert.deepEqual(limit('acme', 'subscriptions'), { ...limit('acme', 'subscriptions'), value: 3, overridden: true });
    assert.equal(limit('acme', 'statement.ms')?.value, 1500);
    assert.equal(limit('other', 'subscriptions')?.overridden, false);
    const text = rollcall(['team', 'show', '--name', 'acme', '--database', database]);
    assert.match(text.stdout, /\* subscriptions\s+3 subscriptions \(default 10\)/);

    const audit = rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]);
    const updates = (JSON.parse(audit.stdout) as { action: string; detail: { limits?: Record<string, unknown> } }[]).filter((e) => e.action === 'team_updated');
    assert.deepEqual(updates.find((e) => e.detail.limits && 'subscriptions' in e.detail.limits)?.detail.limits, { subscriptions: { from: 10, to: 3 }, 'statement.ms': { from: 5000, to: 1500 } });

    assert.equal(rollcall(['team', 'update', '--name', 'acme', '--limit', 'subscriptions=default', '--database', database]).code, 0);
    assert.equal(limit('acme', 'subscriptions')?.overridden, false);
    assert.equal(limit('acme', 'statement.ms')?.value, 1500);
  });

  it('refuses an unknown budget, a value out of range and a missing value, changing nothing', () => {
    for (const [arg, message] of [
      ['nonsense=1', /unknown limit "nonsense"; the limits are: filter\.cost/],
      ['statement.ms=50', /limit statement\.ms takes a whole number of ms from 100 to 60000, or "default"; got "50"/],
      ['subscriptions=-1', /subscriptions takes a whole number/],
      ['subscriptions=1.5', /subscriptions takes a whole number/],
      ['subscriptions', /--limit takes NAME=VALUE/],
    ] as const) {
      const out = rollcall(['team', 'update', '--name', 'other', '--limit', arg, '--database', database]);
      assert.equal(out.code, 1, `${arg}: ${out.stdout}`);
      assert.match(out.stderr, message);
    }
    assert.ok(show('other').limits.every((l) => !l.overridden));
    const neither = rollcall(['team', 'update', '--name', 'other', '--database', database]);
    assert.equal(neither.code, 1);
    assert.match(neither.stderr, /needs --deactivated-users or at least one --limit/);
  });
});
