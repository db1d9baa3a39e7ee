/**
 * RFC 7644 3.7.4 limits and what a Bulk at the limits costs the server, on both engines: 1,001
 * operations are 413 naming maxOperations, a body one byte over 4 MiB is 413 naming
 * maxPayloadSize, and nothing of either runs; the other routes keep their 1 MiB limit. A Bulk
 * at both limits (1,000 user creates in exactly 4,194,304 bytes, padded with displayName and
 * title within their bounds, DESIGN.md section 4) succeeds on a real listening server
 * (127.0.0.1) while /healthz is probed every 20 ms and another team lists its users: both are
 * answered while the Bulk runs (answers arriving after it was sent and before its own answer,
 * an order, not a duration). How long the loop is held is a time, which a loaded machine makes
 * random: it is measured by bench/bulk-loop.ts against the 300 ms, and the largest gap
 * between /healthz answers is only printed here as a diagnostic; test/unit/bulk-yield.test.ts
 * proves the run yields. The heap in use after full collections, before and after the big
 * Bulk, and after a second one, grows by less than twice the payload (a bound on memory, not
 * on time): what a Bulk leaves behind does not add up from one request to the next. A Bulk
 * whose operations all reference each other (the planner's worst case) is answered 409 for
 * each, every probe and read around it answered 200 (its planning runs in one piece, so no
 * answer need fall inside it; the gap is printed), another team's small Bulk is answered
 * while a big one runs, and a Bulk that outlasts the connection's idle timeout still gets its
 * answer.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Storage } from '../../src/storage/connect.ts';
import { hooksOf, hot, StorageCarrier } from '../../src/storage/statements.ts';
import type { Statements } from '../../src/storage/statements.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { assertOpError, auditRows, bulkBody, bulkOk, BULK_RESPONSE, ERROR, teamOf, USER } from '../support/bulk.ts';
import type { BulkResult, TeamClient } from '../support/bulk.ts';

const MAX_OPERATIONS = 1000;
const MAX_PAYLOAD = 4 * 1024 * 1024;
/** The heap may grow by this much across the big Bulk (after full collections): less than the body it read, twice. */
const MAX_HEAP_GROWTH = 2 * MAX_PAYLOAD;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const settledHeap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const postUser = (i: number, pad = '') => ({
  method: 'POST',
  path: '/Users',
  bulkId: `b${i}`,
  data: { schemas: [USER], userName: `big${i}`, displayName: pad.slice(0, Math.ceil(pad.length / 2)), title: pad.slice(Math.ceil(pad.length / 2)) },
});

/** 1,000 user creates padded to exactly `bytes` bytes of JSON. */
function bodyAtTheLimits(prefix: string, bytes: number): string {
  const ops = (pads: number[]) => Array.from({ length: MAX_OPERATIONS }, (_, i) => postUser(i, 'p'.repeat(pads[i]!))).map((op) => ({ ...op, data: { ...op.data, userName: `${prefix}${op.data.userName}` } }));
  const bare = JSON.stringify(bulkBody(ops(new Array<number>(MAX_OPERATIONS).fill(0))));
  const spare = bytes - Buffer.byteLength(bare);
  const each = Math.floor(spare / MAX_OPERATIONS);
  const pads = Array.from({ length: MAX_OPERATIONS }, (_, i) => each + (i < spare % MAX_OPERATIONS ? 1 : 0));
  // displayName holds at most 2,048 characters, title 4,096 (DESIGN.md section 4).
  assert.ok(each + 1 <= 2 * 2048, `padding of ${each} per operation fits displayName and title`);
  const body = JSON.stringify(bulkBody(ops(pads)));
  assert.equal(Buffer.byteLength(body), bytes);
  return body;
}

/** Makes every write statement wait `ms` first while `on`: a Bulk that takes as long as the test needs, without blocking the loop. */
class SlowWrites {
  on = false;
  readonly ms: number;
  constructor(ms: number) {
    this.ms = ms;
  }
  wrap(storage: Storage): Storage {
    const inner = hot(storage.db);
    const pause = async (): Promise<void> => {
      if (this.on) await new Promise((resolve) => setTimeout(resolve, this.ms));
    };
    const statements: Statements = {
      all: inner.all,
      first: inner.first,
      run: async (ex, def, params) => (await pause(), inner.run(ex, def, params)),
      write: async (ex, def, params) => (await pause(), inner.write(ex, def, params)),
      shaped: inner.shaped,
    };
    return { ...storage, db: storage.db.withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
  }
}

for (const engine of engines) {
  describe(`Bulk limits (${engine.name})`, () => {
    let t: TestApp;
    let team: TeamClient;
    let base: string;
    before(async () => {
      t = await createTestApp({ engine });
      team = teamOf(t);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    after(() => t.close());

    const totalUsers = async (client: TeamClient): Promise<number> => Number(json(await client.request('GET', '/v2/scim/Users?count=0')).totalResults);

    it('RFC 7644 3.7.4: 1,001 operations are 413 naming maxOperations, and no operation runs', async () => {
      const res = await team.request('POST', '/v2/scim/Bulk', bulkBody(Array.from({ length: MAX_OPERATIONS + 1 }, (_, i) => postUser(i))));
      assert.equal(res.statusCode, 413, res.body.slice(0, 300));
      const error = json(res);
      assert.deepEqual([error.schemas, error.status], [[ERROR], '413']);
      assert.match(String(error.detail), /maxOperations/);
      assert.match(String(error.detail), /1,?000/);
      assert.equal(await totalUsers(team), 0);
      assert.deepEqual(await auditRows(t, t.team.id), []);
    });

    it('RFC 7644 3.7.4: a body one byte over 4 MiB is 413 naming maxPayloadSize, under both prefixes; other routes keep 1 MiB', async () => {
      const over = bodyAtTheLimits('over', MAX_PAYLOAD + 1);
      for (const prefix of ['/v2/scim', '/scim']) {
        const res = await team.request('POST', `${prefix}/Bulk`, over);
        assert.equal(res.statusCode, 413, `${prefix}: ${res.body.slice(0, 300)}`);
        const error = json(res);
        assert.deepEqual([error.schemas, error.status], [[ERROR], '413']);
        assert.match(String(error.detail), /maxPayloadSize/);
        assert.match(String(error.detail), /4,?194,?304/);
      }
      const user = await team.request('POST', '/v2/scim/Users', JSON.stringify({ schemas: [USER], userName: 'large', title: 'x'.repeat(1024 * 1024) }));
      assert.equal(user.statusCode, 413, 'POST /Users keeps its 1 MiB limit');
      assert.equal(await totalUsers(team), 0);
    });

    // Each Bulk goes on a connection of its own, closed after the answer: the client shares this
    // process, and a client connection still open holds the request it sent, which the heap
    // bound (about the server) must not count.
    const send = (body: string): Promise<{ status: number; ops: BulkResult[] }> => {
      const headers = { connection: 'close', authorization: `Bearer ${t.token}`, 'content-type': 'application/scim+json', 'content-length': Buffer.byteLength(body) };
      const chunks: Buffer[] = [];
      let status = 0;
      const req = httpRequest(`${base}/v2/scim/Bulk`, { method: 'POST', agent: false, headers }, (res) => {
        status = res.statusCode ?? 0;
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
      });
      // No closure here holds the body, and the answer waits for the connection to close, so
      // nothing of the request stays reachable from the client when the heap is read.
      const answered = new Promise<{ status: number; ops: BulkResult[] }>((resolve, reject) => {
        req.on('error', reject);
        req.on('close', () => {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { schemas: string[]; Operations: BulkResult[] };
          if (status === 200) assert.deepEqual(parsed.schemas, [BULK_RESPONSE]);
          resolve({ status, ops: parsed.Operations });
        });
      });
      req.end(body);
      return answered;
    };

    /**
     * Runs `run` while /healthz is asked every 20 ms and `bystanderToken`'s team lists its users
     * one request after another. With `servedDuring`, checks that both were answered while the
     * Bulk ran: at least one answer of each arrived after the Bulk was sent and before it was
     * answered (an order, told by a flag, not a clock). Every answer must be a 200. The largest
     * gap between /healthz answers is printed for information only (bench/bulk-loop.ts measures it).
     */
    async function whileProbing<T>(ctx: { diagnostic(message: string): void }, label: string, bystanderToken: string, servedDuring: boolean, run: () => Promise<T>): Promise<T> {
      let running = true;
      let bulkOpen = true;
      const answers: number[] = [];
      let healthDuring = 0;
      let healthFailures = 0;
      const probes: Promise<void>[] = [];
      const timer = setInterval(() => {
        probes.push(
          fetch(`${base}/healthz`).then(
            async (res) => {
              await res.arrayBuffer();
              if (res.status !== 200) healthFailures++;
              else {
                answers.push(performance.now());
                if (bulkOpen) healthDuring++;
              }
            },
            () => void healthFailures++,
          ),
        );
      }, 20);
      let served = 0;
      let servedDuringBulk = 0;
      let refused = 0;
      const reads = (async () => {
        while (running) {
          const res = await fetch(`${base}/v2/scim/Users`, { headers: { authorization: `Bearer ${bystanderToken}` } });
          await res.arrayBuffer();
          if (res.status !== 200) refused++;
          else {
            served++;
            if (bulkOpen) servedDuringBulk++;
          }
        }
      })();
      const started = performance.now();
      try {
        return await run();
      } finally {
        bulkOpen = false;
        const ended = performance.now();
        running = false;
        clearInterval(timer);
        await Promise.all(probes);
        await reads;
        const during = answers.filter((at) => at >= started && at <= ended);
        const marks = [started, ...during, ended];
        const maxGap = Math.max(...marks.slice(1).map((at, i) => at - marks[i]!));
        ctx.diagnostic(`${engine.name}: ${label} took ${(ended - started).toFixed(0)} ms; ${healthDuring} /healthz answers during it, largest gap ${maxGap.toFixed(1)} ms (information: bench/bulk-loop.ts measures it); bystander reads served ${servedDuringBulk} during it, ${served} in all, refused ${refused}`);
        assert.equal(healthFailures, 0);
        assert.equal(refused, 0);
        if (servedDuring) {
          assert.ok(healthDuring > 0, '/healthz was answered while the Bulk ran');
          assert.ok(servedDuringBulk > 0, 'another team was served while the Bulk ran');
        }
      }
    }

    it('a Bulk at both limits succeeds; /healthz and another team are answered while it runs, the heap stays bounded', async (ctx) => {
      const other = await t.addTeam('bystander');
      const bystander = teamOf(t, other.token);
      assert.equal((await bystander.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'bystander' })).statusCode, 201);
      // Warm up every path the big Bulk takes before the heap's baseline is read.
      const warm = await send(JSON.stringify(bulkBody(Array.from({ length: 20 }, (_, i) => ({ ...postUser(i), bulkId: `w${i}`, data: { schemas: [USER], userName: `warm${i}` } })))));
      assert.equal(warm.status, 200);
      // The body is built inside the call, so nothing of it stays reachable from the test once answered.
      const sendAtTheLimits = (prefix: string) => send(bodyAtTheLimits(prefix, MAX_PAYLOAD));
      const heapBefore = settledHeap();
      const result = await whileProbing(ctx, `Bulk of ${MAX_OPERATIONS} creates, ${MAX_PAYLOAD} bytes,`, other.token, true, () => sendAtTheLimits(''));

      assert.equal(result.status, 200);
      assert.equal(result.ops.length, MAX_OPERATIONS);
      assert.deepEqual([...new Set(result.ops.map((o) => o.status))], ['201']);
      assert.equal(await totalUsers(team), MAX_OPERATIONS + 20);
      assert.equal(result.ops.filter((o) => o.bulkId === `b${MAX_OPERATIONS - 1}`).length, 1, 'every bulkId answered');
      assert.equal(await totalUsers(bystander), 1);

      const heapAfter = settledHeap();
      // A second Bulk at the limits: what one Bulk leaves behind must not add up.
      const again = await sendAtTheLimits('again');
      assert.deepEqual([again.status, again.ops.length], [200, MAX_OPERATIONS]);
      const heapAgain = settledHeap();
      const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
      ctx.diagnostic(`${engine.name}: heap in use ${mib(heapBefore)} before, ${mib(heapAfter)} after one Bulk, ${mib(heapAgain)} after two`);
      assert.ok(heapAfter - heapBefore < MAX_HEAP_GROWTH, `the heap grew by ${mib(heapAfter - heapBefore)} across the Bulk`);
      assert.ok(heapAgain - heapBefore < MAX_HEAP_GROWTH, `the heap grew by ${mib(heapAgain - heapBefore)} across two Bulks`);
    });

    it('a Bulk at the limits whose 1,000 operations all reference each other (one cycle, 178 references each) are each answered 409; every /healthz probe and every read of another team around it is answered 200', async (ctx) => {
      const other = await t.addTeam('onlooker');
      // Group creates naming each other as members: every operation is in one strongly connected
      // component, so every one is answered 409 (RFC 7644 3.7.1); the cost is in the planning.
      const refs = 178;
      const ops = Array.from({ length: MAX_OPERATIONS }, (_, i) => ({
        method: 'POST',
        path: '/Groups',
        bulkId: String(i),
        data: { displayName: `c${i}`, members: Array.from({ length: refs }, (_, j) => ({ value: `bulkId:${(i + 1 + j) % MAX_OPERATIONS}` })) },
      }));
      const body = JSON.stringify(bulkBody(ops));
      assert.ok(Buffer.byteLength(body) <= MAX_PAYLOAD, `${Buffer.byteLength(body)} bytes`);
      const result = await whileProbing(ctx, `Bulk of ${MAX_OPERATIONS} mutually referencing creates, ${Buffer.byteLength(body)} bytes,`, other.token, false, () => send(body));
      assert.equal(result.status, 200);
      assert.equal(result.ops.length, MAX_OPERATIONS);
      for (const op of result.ops) assertOpError(op, '409', /circular/);
      assert.deepEqual(json(await team.request('GET', '/v2/scim/Groups?count=0')).totalResults, 0);
    });

    it('another team\'s small Bulk, sent while a Bulk of 1,000 operations runs, is answered before it: no Bulk waits behind another team\'s', async () => {
      const other = await t.addTeam('neighbour');
      const neighbour = teamOf(t, other.token);
      const before = (await auditRows(t, t.team.id)).length;
      let bigDone = false;
      const big = team.request('POST', '/v2/scim/Bulk', bulkBody(Array.from({ length: MAX_OPERATIONS }, (_, i) => ({ ...postUser(i), data: { schemas: [USER], userName: `long${i}` } })))).then((res) => {
        bigDone = true;
        return res;
      });
      // Once the big Bulk has committed its first operation, it is running.
      while ((await auditRows(t, t.team.id)).length === before) await new Promise((resolve) => setImmediate(resolve));
      const small = await bulkOk(neighbour, bulkBody(Array.from({ length: 5 }, (_, i) => ({ ...postUser(i), data: { schemas: [USER], userName: `quick${i}` } }))));
      assert.deepEqual(small.map((o) => o.status), ['201', '201', '201', '201', '201']);
      assert.equal(bigDone, false, 'the small Bulk was answered while the big one still ran');
      const committedMeanwhile = (await auditRows(t, t.team.id)).length - before;
      assert.ok(committedMeanwhile < MAX_OPERATIONS, `${committedMeanwhile} of the big Bulk's operations had committed`);
      const res = await big;
      assert.equal(res.statusCode, 200);
      assert.equal((json(res).Operations as BulkResult[]).filter((o) => o.status === '201').length, MAX_OPERATIONS);
    });

    it('a Bulk that runs longer than the connection idle timeout still gets its answer: the socket is not idle, the server is working', async (ctx) => {
      // The idle timeout (DESIGN.md section 6 deadlines, 60 s by default) is shortened to 300 ms,
      // and each write waits 50 ms, so the Bulk's 8 creates (two writes or more each) keep the
      // socket silent for longer than that while the server works on the client's request.
      const slow = new SlowWrites(50);
      const s = await createTestApp({ engine, wrapStorage: (storage) => slow.wrap(storage), deps: { deadlines: { idleTimeout: 300 } } });
      try {
        await s.app.listen({ host: '127.0.0.1', port: 0 });
        const url = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}/v2/scim/Bulk`;
        slow.on = true;
        const started = performance.now();
        const outcome = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/scim+json' }, body: JSON.stringify(bulkBody(Array.from({ length: 8 }, (_, i) => ({ ...postUser(i), data: { schemas: [USER], userName: `slow${i}` } })))) }).then(
          async (res) => ({ status: res.status, body: (await res.json()) as { Operations: BulkResult[] } }),
          (error: unknown) => ({ status: 0, error: String((error as { cause?: unknown }).cause ?? error) }),
        );
        slow.on = false;
        ctx.diagnostic(`${engine.name}: answered ${outcome.status} after ${(performance.now() - started).toFixed(0)} ms ${'error' in outcome ? outcome.error : ''}`);
        assert.equal(outcome.status, 200, 'the client got its answer');
        assert.ok('body' in outcome);
        assert.deepEqual(outcome.body.Operations.map((o) => o.status), new Array(8).fill('201'));
      } finally {
        slow.on = false;
        await s.close();
      }
    });
  });
}
