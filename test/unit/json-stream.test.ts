/**
 * Streamed JSON bodies (scim/json-stream.ts): the bytes written in pieces are exactly
 * JSON.stringify's of the body with its arrays complete, whatever the chunks (empty ones
 * included) and even when the data holds strings that look like the placeholders; elements
 * serialized before are spliced in with the same bytes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdsStreamedArray, jsonBody, SerializedArray, StreamedArray } from '../../src/scim/json-stream.ts';

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
});
