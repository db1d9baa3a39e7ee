/**
 * Streamed JSON bodies (scim/json-stream.ts): the bytes written in pieces are exactly
 * JSON.stringify's of the body with its arrays complete, whatever the chunks (empty ones
 * included) and even when the data holds strings that look like the placeholders; elements
 * serialized before are spliced in with the same bytes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdsStreamedArray, jsonBody, SerializedArray, StreamedArray } from '../../src/scim/json-stream.ts';
import { listResponse } from '../../src/scim/representation.ts';

async function text(body: unknown): Promise<string> {
  const payload = jsonBody(body);
  if ('bytes' in payload) return payload.bytes.toString('utf8');
  const pieces: Buffer[] = [];
  for await (const piece of payload.pieces) pieces.push(piece);
  return Buffer.concat(pieces).toString('utf8');
}

const streamed = (head: unknown[], chunks: unknown[][]) =>
  new StreamedArray(head, async function* () {
    yield* chunks;
  });

describe('streamed JSON bodies', () => {
  it('a body without streamed arrays is one buffer, JSON.stringify\'s bytes', () => {
    const body = { a: [1, { b: 'ü' }], c: null };
    const payload = jsonBody(body);
    assert.ok('bytes' in payload);
    assert.equal(payload.bytes.toString('utf8'), JSON.stringify(body));
  });

  it('streamed arrays, with empty heads and chunks, write what the complete body would', async () => {
    const cases: [unknown[], unknown[][]][] = [[[], []], [[1], []], [[], [[1, 2], [], [3]]], [[{ v: 'x' }], [[], [{ v: '"y"' }]]]];
    for (const [head, chunks] of cases) {
      const body = { schemas: ['s'], members: streamed(head, chunks), meta: { n: 1 } };
      const complete = { schemas: ['s'], members: [...head, ...chunks.flat()], meta: { n: 1 } };
      assert.equal(await text(body), JSON.stringify(complete));
    }
  });

  it('several streamed arrays in a list, and data that looks like a placeholder, stay as they are', async () => {
    const lookalike = '\u0000rollcall-streamed-array:00000000-0000-0000-0000-000000000000';
    const body = { Resources: [{ members: streamed([1], [[2]]), note: lookalike }, { members: streamed([], [[3], [4]]) }] };
    const complete = { Resources: [{ members: [1, 2], note: lookalike }, { members: [3, 4] }] };
    assert.equal(await text(body), JSON.stringify(complete));
    assert.equal(await text({ note: lookalike }), JSON.stringify({ note: lookalike }));
  });

  it('an array serialized before is spliced in: the bytes of JSON.stringify with the array itself, in one buffer', async () => {
    const resources = [{ id: 'A', name: { given: 'Zoë "Z"' }, list: [1, null] }, { id: 'B', note: '$& $1 $$' }, {}];
    const envelope = (r: unknown) => ({ schemas: ['urn:x'], totalResults: 3, Resources: r, after: 'x' });
    const payload = jsonBody(envelope(new SerializedArray(resources.map((r) => JSON.stringify(r)))));
    assert.ok('bytes' in payload);
    assert.equal(payload.bytes.toString('utf8'), JSON.stringify(envelope(resources)));
    assert.equal(await text(envelope(new SerializedArray([]))), JSON.stringify(envelope([])));
    // Beside a streamed array, both expand.
    const both = { a: new SerializedArray(['{"x":1}']), b: streamed([1], [[2], [3]]) };
    assert.equal(await text(both), JSON.stringify({ a: [{ x: 1 }], b: [1, 2, 3] }));
    assert.equal(holdsStreamedArray(JSON.stringify({ m: streamed([], []) })), true);
    assert.equal(holdsStreamedArray(JSON.stringify(resources)), false);
  });

  it('issue 27 item 12: a list page is sent by size, not by count: 16 resources of 250 KiB take as many turns of the event loop as their 4 MB ask, 100 small ones hardly any', async () => {
    /** The body's text, the pieces it came in, and how often the event loop turned while it was written. */
    const sent = async (body: unknown) => {
      const payload = jsonBody(body);
      if ('bytes' in payload) return { text: payload.bytes.toString('utf8'), pieces: 1, turns: 0 };
      let turns = 0;
      let turning = true;
      const turn = () => {
        turns++;
        if (turning) setImmediate(turn);
      };
      setImmediate(turn);
      const pieces: Buffer[] = [];
      for await (const piece of payload.pieces) pieces.push(piece);
      turning = false;
      return { text: Buffer.concat(pieces).toString('utf8'), pieces: pieces.length, turns };
    };
    const user = (i: number, size: number) => ({ id: `U${i}`, userName: `user${i}`, title: 'x'.repeat(size) });
    const big = Array.from({ length: 16 }, (_, i) => user(i, 250 * 1024));
    const small = Array.from({ length: 100 }, (_, i) => user(i, 900));
    for (const withTexts of [true, false]) {
      const page = (resources: Record<string, unknown>[]) =>
        listResponse({ totalResults: resources.length, startIndex: 1, resources, ...(withTexts ? { serialized: resources.map((r) => JSON.stringify(r)) } : {}) });
      const complete = (resources: unknown[]) => JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });
      const large = await sent(page(big));
      assert.equal(large.text, complete(big), 'the same bytes as one JSON.stringify');
      // Each 250 KiB resource is past the turn size: the loop turns after every one.
      assert.ok(large.turns >= big.length - 1, `${withTexts ? 'serialized' : 'in hand'}: ${large.turns} turns for ${big.length} large resources`);
      assert.ok(large.pieces >= big.length, `${large.pieces} pieces`);
      const few = await sent(page(small));
      assert.equal(few.text, complete(small));
      assert.ok(few.turns <= 3, `${few.turns} turns for ${small.length} small resources (${few.text.length} characters)`);
    }
  });
});
