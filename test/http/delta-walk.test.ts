/**
 * A delta query page examines a bounded number of feed rows (scim/delta.ts DELTA_WALK_ROWS, set
 * small here through the app's `deltaWalkRows`), on every engine, over HTTP: a range dominated by
 * one user's superseded changes is crossed over several pages, empty ones included, each followed
 * by a nextCursor (RFC 7644 3.4.2.4: a page MAY hold fewer results than count; RFC 9865: nextCursor
 * on every page but the last); the user is still reported exactly once per delta, at its last
 * change up to the delta's end, and the delta still ends with nextDeltaToken.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const WALK = 10;

type Json = Record<string, unknown>;
interface Page {
  readonly ids: string[];
  readonly titles: unknown[];
  readonly nextCursor?: string;
  readonly nextDeltaToken?: string;
}

for (const engine of engines) {
  describe(`Delta query pages examine at most deltaWalkRows feed rows on ${engine.name}`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp({ engine, deps: { deltaWalkRows: WALK } });
    });
    after(async () => {
      await t.close();
    });

    const createUser = async (userName: string): Promise<string> => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };
    const retitle = async (id: string, title: string) => {
      const res = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: title }] });
      assert.equal(res.statusCode, 200, res.body);
    };
    const token = async (): Promise<string> => {
      const res = await t.request('GET', '/v2/scim/Users/.deltaToken');
      assert.equal(res.statusCode, 200, res.body);
      return String(json(res).nextDeltaToken);
    };
    /** Every page of the delta since `since`, `count` a page, with `between` run after each page but the last. */
    const pages = async (since: string, count: number, between?: () => Promise<void>): Promise<Page[]> => {
      const out: Page[] = [];
      let cursor: string | undefined;
      for (let n = 0; n < 200; n++) {
        const q = new URLSearchParams({ deltaToken: since, count: String(count), ...(cursor ? { cursor } : {}) });
        const res = await t.request('GET', `/v2/scim/Users?deltaQuery&${q}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res);
        const resources = (body.Resources as Json[] | undefined) ?? [];
        const page: Page = {
          ids: resources.map((r) => String(r.id)),
          titles: resources.map((r) => r.title),
          ...(body.nextCursor !== undefined ? { nextCursor: String(body.nextCursor) } : {}),
          ...(body.nextDeltaToken !== undefined ? { nextDeltaToken: String(body.nextDeltaToken) } : {}),
        };
        out.push(page);
        assert.ok((page.nextCursor === undefined) !== (page.nextDeltaToken === undefined), 'each page carries exactly one of nextCursor and nextDeltaToken');
        if (page.nextDeltaToken !== undefined) return out;
        cursor = page.nextCursor;
        await between?.();
      }
      throw new Error('the delta never ended');
    };

    it('one user changed many times: pages of superseded changes come back empty with a cursor, the user once at its last change', async () => {
      const since = await token();
      const hot = await createUser('walk-hot');
      for (let i = 1; i <= 40; i++) await retitle(hot, `t${i}`);
      const other = await createUser('walk-other');
      await retitle(hot, 'last');
      const final = await createUser('walk-final');
      const rows = 44; // the feed rows of the range: 3 creations, 41 changes

      // A change after the delta's end (taken at its first page) belongs to the next delta.
      let late = 0;
      const walked = await pages(since, 100, async () => {
        late += 1;
        await retitle(hot, `late${late}`);
      });
      assert.equal(walked.length, Math.ceil(rows / WALK), `each page examined ${WALK} rows of the feed, the last the rest`);
      for (const page of walked.slice(0, -1)) assert.deepEqual(page.ids, [], 'the first rows are all superseded changes of one user: nothing to report, yet not the end');
      const lastPage = walked.at(-1)!;
      assert.deepEqual(lastPage.ids, [other, hot, final], 'each resource once, in the order of its last change');
      assert.equal(lastPage.titles[1], `late${late}`, 'read as it is now (its current representation)');

      const next = await pages(lastPage.nextDeltaToken!, 100);
      assert.deepEqual(next.flatMap((p) => p.ids), [hot], 'the changes made during the walk: the user once more, in the next delta');
      assert.equal(next.length, Math.ceil(late / WALK));
    });

    it('a range of distinct changes: a page holds at most deltaWalkRows resources, fewer than count, none twice', async () => {
      const since = await token();
      const created: string[] = [];
      for (let i = 0; i < 25; i++) created.push(await createUser(`walk-many-${i}`));
      const walked = await pages(since, 100);
      assert.deepEqual(walked.map((p) => p.ids.length), [10, 10, 5]);
      assert.deepEqual(walked.flatMap((p) => p.ids), created);

      // count under the bound: the page stops at count, and the next resumes after its last change.
      const small = await pages(since, 4);
      assert.deepEqual(small.map((p) => p.ids.length), [4, 4, 4, 4, 4, 4, 1]);
      assert.deepEqual(small.flatMap((p) => p.ids), created);
    });
  });
}
