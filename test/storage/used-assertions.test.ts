/**
 * RFC 7523 3 item 7 in storage (migration 021), on every engine: an assertion's id is taken once
 * per issuer (the primary key decides, so concurrent takers cannot both win), the same id of
 * another issuer is another id, and expired ids are purged in bounded batches while live ones stay.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PURGE_BATCH, purgeUsedAssertions, rememberAssertion } from '../../src/storage/repos/client-trust.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const LIVE = '2026-01-01T01:00:00.000Z';
const NOW = '2026-01-01T00:00:00.000Z';
const EXPIRED = '2025-12-31T23:00:00.000Z';

for (const engine of engines) {
  describe(`used assertion ids (${engine.name})`, () => {
    let database: TestDatabase;
    beforeEach(async () => {
      database = await engine.open();
    });
    afterEach(() => database.dispose());

    it('an id is taken once per issuer, also by racing takers', async () => {
      const db = database.storage.db;
      const results = await Promise.all(Array.from({ length: 4 }, () => rememberAssertion(db, 'https://issuer.example', 'uti-1', LIVE)));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal(await rememberAssertion(db, 'https://issuer.example', 'uti-1', LIVE), false);
      assert.equal(await rememberAssertion(db, 'https://other.example', 'uti-1', LIVE), true);
    });

    it('purging deletes at most one batch of expired ids and never a live one', async () => {
      const db = database.storage.db;
      const expired = PURGE_BATCH + 25;
      for (let i = 0; i < expired; i++) assert.equal(await rememberAssertion(db, 'https://issuer.example', `old-${i}`, EXPIRED), true);
      assert.equal(await rememberAssertion(db, 'https://issuer.example', 'live', LIVE), true);
      assert.equal(await purgeUsedAssertions(db, NOW), PURGE_BATCH);
      assert.equal(await purgeUsedAssertions(db, NOW), 25);
      assert.equal(await purgeUsedAssertions(db, NOW), 0);
      assert.equal(await rememberAssertion(db, 'https://issuer.example', 'live', LIVE), false, 'the live id is still remembered');
      assert.equal(await rememberAssertion(db, 'https://issuer.example', 'old-0', LIVE), true, 'a purged id may be used again (its assertion has expired)');
    });
  });
}
