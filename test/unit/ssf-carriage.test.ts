/**
 * SSF stream delivery's pure parts (issue 33): the receiver's Authorization header sealed for one
 * stream opens for that stream only and only as a header value node:http sends as given (SSF 1.0
 * 6.1.1), and the console figure's percentile is the nearest rank.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox } from '../../src/keys/sealed.ts';
import { pushAuthorization, StreamAuthorizationUnreadable } from '../../src/events/ssf/carriage.ts';
import { percentile } from '../../src/events/ssf/latency.ts';
import { sealAuthorization, STREAM_SECRETS } from '../../src/events/stream-config.ts';

const box = new SecretBox(randomBytes(32), STREAM_SECRETS);
const stream = (id: string, authorizationHeader?: string) => ({
  id,
  format: 'ssf' as const,
  ssf: JSON.stringify({ aud: 'a', eventsRequested: [], eventsDelivered: [], status: 'enabled', ...(authorizationHeader !== undefined ? { authorizationHeader } : {}) }),
});

describe('SSF push Authorization header', () => {
  it('opens for its stream; none for a stream without one or a subscription of another format', () => {
    assert.equal(pushAuthorization(box, stream('S1', sealAuthorization(box, 'S1', 'Bearer abc'))), 'Bearer abc');
    assert.equal(pushAuthorization(box, stream('S1')), undefined);
    assert.equal(pushAuthorization(box, { id: 'W', format: 'webhook', ssf: null }), undefined);
  });

  it('a header sealed for another stream, under another key, without a key, or with a line break is unreadable', () => {
    assert.throws(() => pushAuthorization(box, stream('S2', sealAuthorization(box, 'S1', 'Bearer abc'))), StreamAuthorizationUnreadable);
    assert.throws(() => pushAuthorization(new SecretBox(randomBytes(32), STREAM_SECRETS), stream('S1', sealAuthorization(box, 'S1', 'Bearer abc'))), StreamAuthorizationUnreadable);
    assert.throws(() => pushAuthorization(undefined, stream('S1', sealAuthorization(box, 'S1', 'Bearer abc'))), StreamAuthorizationUnreadable);
    assert.throws(() => pushAuthorization(box, stream('S1', sealAuthorization(box, 'S1', 'Bearer abc\r\nX-Injected: 1'))), StreamAuthorizationUnreadable);
  });

  it('the message of an unreadable header never holds the header', () => {
    try {
      pushAuthorization(box, stream('S1', sealAuthorization(box, 'S1', 'Bearer secret-value\n')));
      assert.fail('refused');
    } catch (error) {
      assert.ok(error instanceof StreamAuthorizationUnreadable);
      assert.doesNotMatch(error.message, /secret-value/);
    }
  });
});

describe('latency percentile (nearest rank)', () => {
  it('p50 and p99 of 1..100 are 50 and 99; one value is every percentile', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(values, 50), 50);
    assert.equal(percentile(values, 99), 99);
    assert.equal(percentile(values, 100), 100);
    assert.equal(percentile([7], 50), 7);
    assert.equal(percentile([7], 99), 7);
  });
});
