/**
 * Issue 31 item 6: the PATCH (and POST, PUT) shapes identity providers send for users' `roles`
 * and `entitlements`, replayed from test/fixtures/roles (each quoting its documented source), on
 * every engine, in a team with the fixture's catalog (seedCatalog) and in one without: the same
 * answers, and after each write the user's user_grants rows (`grants`, as `kind value type
 * [primary]`) are those its document holds. The fixture format is test/conformance/replay.test.ts's.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import type { SeedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

interface Step {
  readonly id: string;
  readonly note?: string;
  readonly request: { readonly method: string; readonly path: string; readonly body?: unknown };
  readonly expect: { readonly status: number; readonly fields?: Record<string, unknown>; readonly absent?: readonly string[] };
  readonly capture?: Record<string, string>;
  /** The team's grants rows after the step, `kind value type[ primary]`, sorted. */
  readonly grants?: readonly string[];
}

interface Fixture {
  readonly provider: string;
  readonly source: string;
  readonly catalog: SeedCatalog;
  readonly steps: readonly Step[];
}

const dir = join(import.meta.dirname, '..', 'fixtures', 'roles');

function at(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split('/')) {
    if (current === null || current === undefined) return undefined;
    if (Array.isArray(current) && /^\d+$/.test(part)) current = current[Number(part)];
    else if (part === 'length' && Array.isArray(current)) current = current.length;
    else current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function substitute(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') return value.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

async function grantsOf(t: TestApp): Promise<string[]> {
  const rows = await t.storage.db.selectFrom('user_grants').selectAll().where('team_id', '=', t.team.id).execute();
  return rows.map((r) => `${r.kind} ${r.value} ${r.type}${r.is_primary ? ' primary' : ''}`).sort();
}

const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((file) => ({ file, fixture: JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture }));

for (const engine of engines) {
  for (const { file, fixture } of fixtures) {
    for (const withCatalog of [true, false]) {
      describe(`${fixture.provider} (${file}) on ${engine.name}, ${withCatalog ? 'with' : 'without'} a catalog`, () => {
        it(`replays ${fixture.steps.length} requests (${fixture.source.slice(0, 80)}...)`, async () => {
          const t = await createTestApp({ engine });
          const vars: Record<string, unknown> = {};
          try {
            if (withCatalog) await seedCatalog(t.storage, t.team.id, fixture.catalog);
            for (const step of fixture.steps) {
              const label = `${step.id}${step.note ? ` (${step.note})` : ''}`;
              const path = substitute(step.request.path, vars) as string;
              const url = `/v2/scim${path.replace(/ /g, '%20').replace(/"/g, '%22')}`;
              const body = step.request.body === undefined ? undefined : substitute(step.request.body, vars);
              const res = await t.request(step.request.method, url, body);
              assert.equal(res.statusCode, step.expect.status, `${label}: status; body ${res.body}`);
              const parsed: unknown = res.body === '' ? undefined : JSON.parse(res.body);
              for (const [field, expected] of Object.entries(step.expect.fields ?? {})) {
                assert.deepEqual(at(parsed, field), substitute(expected, vars), `${label}: ${field} in ${res.body}`);
              }
              for (const field of step.expect.absent ?? []) assert.equal(at(parsed, field), undefined, `${label}: ${field} must be absent in ${res.body}`);
              for (const [name, field] of Object.entries(step.capture ?? {})) vars[name] = at(parsed, field);
              if (step.grants) assert.deepEqual(await grantsOf(t), [...step.grants].sort(), `${label}: grants rows`);
            }
          } finally {
            await t.close();
          }
        });
      });
    }
  }
}

for (const engine of engines) {
  describe(`Entra's quirks stay where they belong on ${engine.name}`, () => {
    it('a list filter still refuses a quoted boolean (only PATCH paths take "True"), and a JSON-looking value of another attribute is kept', async () => {
      const t = await createTestApp({ engine });
      try {
        const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('roles[primary eq "True"]')}`);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(JSON.parse(res.body).scimType, 'invalidFilter');
        const created = await t.request('POST', '/v2/scim/Users', { userName: 'j@x.example', entitlements: [{ value: '{"value":"x"}' }] });
        assert.equal(created.statusCode, 201, created.body);
        assert.deepEqual(JSON.parse(created.body).entitlements, [{ value: '{"value":"x"}' }]);
      } finally {
        await t.close();
      }
    });
  });
}
