/**
 * DESIGN.md section 7's property extended to team schema extensions (issue 11), on every engine:
 * a random extension schema (strings case-exact or not, integers, decimals, booleans, dateTimes,
 * a multi-valued string, multi-valued and single complex attributes) is registered through the
 * admin API, random users carry random values of it, and random filters and sorts over its
 * attributes return in SQL (JSON expressions through the dialect hooks) exactly what the in-memory
 * evaluator (evaluate.ts `matches`, over the team's resource types) and the sort oracle say. One
 * seed drives the schema, the data and the filters; a failure names it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ScimError } from '../../src/scim/errors.ts';
import { bindFilter } from '../../src/scim/filter/bind.ts';
import { matches } from '../../src/scim/filter/evaluate.ts';
import { parseFilter } from '../../src/scim/filter/parse.ts';
import { readExtension, teamTypes } from '../../src/scim/schema/extensions.ts';
import type { ResourceTypeDef } from '../../src/scim/schema/types.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { CORE_USER, filterText, sortedIds } from '../support/scim-random.ts';

type Json = Record<string, unknown>;

const URN = 'urn:example:params:scim:schemas:extension:Random:2.0:User';
const USERS = 24;
const FILTER_RUNS = 80;
const SORT_RUNS = 30;

const word = fc.array(fc.constantFrom('al', 'Al', 'AL', 'bo', 'É', 'é', 'x', '%', '_', 'ΟΔΟΣ', 'İ', ' '), { minLength: 1, maxLength: 3 }).map((p) => p.join(''));
const DATES = ['2020-01-02T00:00:00.000Z', '2021-06-30T12:00:00.000Z', '2024-02-29T23:59:59.000Z'];

/** A random extension schema: a random subset of attribute kinds, with random case-exactness. */
const schemaArb = fc
  .record({
    caseExact: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    chosen: fc.subarray(['code', 'level', 'ratio', 'remote', 'since', 'tags', 'skills', 'office'], { minLength: 4 }),
  })
  .map(({ caseExact, chosen }) => {
    const all: Record<string, Json> = {
      code: { name: 'code', type: 'string', caseExact: caseExact[0] },
      level: { name: 'level', type: 'integer' },
      ratio: { name: 'ratio', type: 'decimal' },
      remote: { name: 'remote', type: 'boolean' },
      since: { name: 'since', type: 'dateTime' },
      tags: { name: 'tags', type: 'string', multiValued: true, caseExact: caseExact[1] },
      skills: { name: 'skills', type: 'complex', multiValued: true, subAttributes: [{ name: 'name', type: 'string', caseExact: caseExact[2] }, { name: 'years', type: 'integer' }] },
      office: { name: 'office', type: 'complex', subAttributes: [{ name: 'site', type: 'string' }, { name: 'floor', type: 'integer' }] },
    };
    // At least one complex attribute, for value paths.
    const names = chosen.includes('skills') || chosen.includes('office') ? chosen : [...chosen, 'office'];
    return { id: URN, name: 'Random', attributes: names.map((n) => all[n]!) };
  });

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

/** Values for the attributes `schema` declares (absent one time in three). */
const valuesArb = (schema: { attributes: Json[] }): fc.Arbitrary<Json> => {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const a of schema.attributes) {
    const name = String(a.name);
    if (name === 'code') parts[name] = optional(word);
    if (name === 'level') parts[name] = optional(fc.integer({ min: -3, max: 20 }));
    if (name === 'ratio') parts[name] = optional(fc.integer({ min: -8, max: 40 }).map((n) => n / 4));
    if (name === 'remote') parts[name] = optional(fc.boolean());
    if (name === 'since') parts[name] = optional(fc.constantFrom(...DATES));
    if (name === 'tags') parts[name] = optional(fc.array(word, { minLength: 1, maxLength: 3 }));
    if (name === 'skills') parts[name] = optional(fc.array(fc.record({ name: optional(word), years: optional(fc.integer({ min: 0, max: 10 })) }).map(defined), { minLength: 1, maxLength: 3 }));
    if (name === 'office') parts[name] = optional(fc.record({ site: optional(word), floor: optional(fc.integer({ min: -1, max: 9 })) }).map(defined));
  }
  return fc.record(parts).map((r) => defined(r as Json));
};

function defined(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)));
}

const ids = (body: Json): string[] => ((body.Resources as Json[]) ?? []).map((r) => String(r.id));

for (const engine of engines) {
  describe(`extension filters and sorts in SQL equal the in-memory oracle on ${engine.name}`, () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const label = `(seed ${seed}, ${engine.name})`;
    const schema = fc.sample(schemaArb, { seed, numRuns: 1 })[0]!;
    const rt: ResourceTypeDef = teamTypes([readExtension('User', false, schema)]).User;
    const paths = schema.attributes.flatMap((a) => {
      const subs = (a.subAttributes as Json[] | undefined) ?? [];
      return [`${URN}:${String(a.name)}`, ...subs.map((s) => `${URN}:${String(a.name)}.${String(s.name)}`)];
    });
    const valuePaths = schema.attributes.filter((a) => a.type === 'complex').map((a) => `${URN}:${String(a.name)}`);
    let t: TestApp;
    let users: Json[];

    before(async () => {
      t = await createTestApp({ engine });
      const registered = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema });
      assert.equal(registered.statusCode, 201, registered.body);
      const data = fc.sample(fc.array(valuesArb(schema), { minLength: USERS, maxLength: USERS }), { seed, numRuns: 1 })[0]!;
      for (const [i, values] of data.entries()) {
        const body = { schemas: [CORE_USER, URN], userName: `u${i}`, ...(Object.keys(values).length > 0 ? { [URN]: values } : {}) };
        const res = await t.request('POST', '/v2/scim/Users', body);
        assert.equal(res.statusCode, 201, `${JSON.stringify(body)}: ${res.body} ${label}`);
      }
      users = json(await t.request('GET', '/v2/scim/Users?count=1000')).Resources as Json[];
      assert.equal(users.length, USERS);
    });
    after(() => t.close());

    const oracle = (text: string): string[] | ScimError => {
      try {
        const bound = bindFilter(rt, parseFilter(text));
        return users.filter((r) => matches(bound, r)).map((r) => String(r.id));
      } catch (error) {
        if (error instanceof ScimError) return error;
        throw error;
      }
    };

    it('RFC 7644 3.4.2.2: random filters on a random extension schema answer in SQL what matches() accepts', async () => {
      let informative = 0;
      await fc.assert(
        fc.asyncProperty(filterText(rt, users, { paths, valuePaths, refused: [`${URN}:nothere pr`] }), async (text) => {
          const expected = oracle(text);
          const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(text)}&attributes=id&count=1000`);
          if (expected instanceof ScimError) {
            assert.equal(res.statusCode, 400, `${text} ${label}: the oracle refused it (${expected.message}), SQL answered ${res.body}`);
            assert.equal(json(res).scimType, expected.scimType, `${text} ${label}`);
            return;
          }
          assert.equal(res.statusCode, 200, `${text} ${label}: ${res.body}`);
          assert.deepEqual(ids(json(res)), expected, `${text} ${label}`);
          if (expected.length > 0 && expected.length < users.length) informative++;
        }),
        { numRuns: FILTER_RUNS, seed },
      );
      assert.ok(informative >= FILTER_RUNS / 8, `only ${informative} of ${FILTER_RUNS} filters split the users ${label}`);
    });

    it('RFC 7644 3.4.2.3: sortBy on extension attributes orders as the sort oracle does, absent values last', async () => {
      const sortable = paths.filter((p) => {
        const [name, sub] = p.slice(URN.length + 1).split('.');
        const a = schema.attributes.find((x) => x.name === name)!;
        // A complex attribute without `value` sorts only by a sub-attribute.
        return a.type !== 'complex' || sub !== undefined;
      });
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...sortable), fc.boolean(), async (sortBy, descending) => {
          const expected = sortedIds(rt, users, sortBy, descending);
          const query = new URLSearchParams({ sortBy, sortOrder: descending ? 'descending' : 'ascending', attributes: 'id', count: '1000' });
          const res = await t.request('GET', `/v2/scim/Users?${query.toString()}`);
          assert.equal(res.statusCode, 200, `${sortBy} ${label}: ${res.body}`);
          assert.deepEqual(ids(json(res)), expected, `${sortBy} ${descending ? 'descending' : 'ascending'} ${label}`);
        }),
        { numRuns: SORT_RUNS, seed },
      );
    });
  });
}
