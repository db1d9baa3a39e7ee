/**
 * verifyWebhook (docs/events.md, "Plain signed webhooks"; the Standard Webhooks
 * specification) against requests signed by the specification's reference library
 * (`standardwebhooks`): accepted as signed; refused when the body, id or timestamp is changed,
 * the timestamp is outside the tolerance, or the secret is another; several signatures and
 * several secrets (a rotation's overlap); and, over random requests and random changes, the
 * client accepts exactly what the reference library accepts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError, verifyWebhook } from '../../packages/client/src/index.ts';
import type { WebhookEvent } from '../../packages/client/src/index.ts';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const event: WebhookEvent = {
  type: 'user.created',
  timestamp: '2026-11-26T12:00:00.000Z',
  data: {
    sequence: 42,
    event: 'urn:ietf:params:scim:event:prov:create:notice',
    transaction: 'req-7f3a',
    resource: { type: 'User', id: '8ZJ2M5Q1XK0R7C3V9B4D', location: 'https://rollcall.example/v2/scim/Users/8ZJ2M5Q1XK0R7C3V9B4D', version: 'W/"1"' },
    changed: ['active', 'userName'],
  },
};

function signed(secret: string, body: string, at = new Date(), id = 'evt_T1_42') {
  const signature = new Webhook(secret).sign(id, at, body);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}

const refused = (f: () => unknown, why: RegExp) => assert.throws(f, (e: unknown) => e instanceof WebhookVerificationError && why.test(e.message));

describe('verifyWebhook', () => {
  it('accepts what the reference library signs and returns the typed event; headers as a record, a Headers, a Buffer body', () => {
    const secret = newSecret();
    const body = JSON.stringify(event);
    const headers = signed(secret, body);
    assert.deepEqual(verifyWebhook(secret, body, headers), event);
    assert.equal(verifyWebhook(secret, Buffer.from(body), new Headers(headers)).data.sequence, 42);
    // Node's IncomingHttpHeaders-like record; the secret's base64 without the prefix works too.
    assert.equal(verifyWebhook(secret.slice('whsec_'.length), new Uint8Array(Buffer.from(body)), { ...headers, host: 'x' }).type, 'user.created');
  });

  it('refuses a changed body, id or timestamp, another secret, a missing header', () => {
    const secret = newSecret();
    const body = JSON.stringify(event);
    const headers = signed(secret, body);
    refused(() => verifyWebhook(secret, body.replace('42', '43'), headers), /signature/);
    refused(() => verifyWebhook(secret, `${body} `, headers), /signature/);
    refused(() => verifyWebhook(secret, body, { ...headers, 'webhook-id': 'evt_T1_43' }), /signature/);
    refused(() => verifyWebhook(secret, body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }), /signature/);
    refused(() => verifyWebhook(newSecret(), body, headers), /signature/);
    refused(() => verifyWebhook(secret, body, { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }), /signature/);
    refused(() => verifyWebhook(secret, body, { ...headers, 'webhook-signature': 'v1,' }), /signature/);
    refused(() => verifyWebhook(secret, body, { 'webhook-id': headers['webhook-id'], 'webhook-timestamp': headers['webhook-timestamp'] }), /missing/);
    refused(() => verifyWebhook(secret, body, { ...headers, 'webhook-timestamp': '17e8' }), /integer/);
  });

  it('the timestamp must lie within the tolerance of now, either side', () => {
    const secret = newSecret();
    const body = JSON.stringify(event);
    const at = new Date('2026-11-26T12:00:00Z');
    const headers = signed(secret, body, at);
    assert.ok(verifyWebhook(secret, body, headers, { now: new Date(at.getTime() + 300_000) }));
    assert.ok(verifyWebhook(secret, body, headers, { now: at.getTime() - 300_000 }));
    refused(() => verifyWebhook(secret, body, headers, { now: at.getTime() + 301_000 }), /tolerance/);
    refused(() => verifyWebhook(secret, body, headers, { now: at.getTime() - 301_000 }), /tolerance/);
    refused(() => verifyWebhook(secret, body, headers, { now: at.getTime() + 61_000, toleranceSeconds: 60 }), /tolerance/);
    refused(() => verifyWebhook(secret, body, signed(secret, body, new Date(Date.now() - 3_600_000))), /tolerance/);
  });

  it('several signatures (a rotation: one per live secret, newest first) and several secrets', () => {
    const [older, newer] = [newSecret(), newSecret()];
    const body = JSON.stringify(event);
    const at = new Date();
    const a = signed(older, body, at);
    const b = signed(newer, body, at);
    const both = { ...a, 'webhook-signature': `${b['webhook-signature']} ${a['webhook-signature']}` };
    assert.ok(verifyWebhook(older, body, both));
    assert.ok(verifyWebhook(newer, body, both));
    // A receiver holding both secrets during the overlap accepts a request signed by either.
    assert.ok(verifyWebhook([newer, older], body, a));
    assert.ok(verifyWebhook([newer, older], body, b));
    refused(() => verifyWebhook([newSecret(), newSecret()], body, both), /signature/);
    // The reference library agrees on the two-signature header.
    assert.deepEqual(new Webhook(older).verify(body, both), event);
  });

  it('a body that verifies but is not a Rollcall event is refused', () => {
    const secret = newSecret();
    for (const body of ['not json', '{"type":"user.created"}', '[]']) refused(() => verifyWebhook(secret, body, signed(secret, body)), /JSON|event/);
  });

  it('over random requests and random changes, accepts exactly what the reference library accepts', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 0, maxLength: 40 }),
        fc.stringMatching(/^msg_[A-Za-z0-9]{1,12}$/),
        // Seconds off now, kept away from the 300 s edge (the two verifiers read the clock apart).
        fc.integer({ min: -400, max: 400 }).filter((n) => Math.abs(Math.abs(n) - 300) > 5),
        fc.constantFrom('none', 'body', 'id', 'timestamp', 'secret', 'signature'),
        (text, id, skew, change) => {
          const secret = newSecret();
          const body = JSON.stringify({ ...event, data: { ...event.data, transaction: text } });
          const headers: Record<string, string> = signed(secret, body, new Date(Date.now() + skew * 1000), id);
          let [b, s] = [body, secret];
          if (change === 'body') b = JSON.stringify({ ...event, data: { ...event.data, transaction: `${text}!` } });
          if (change === 'id') headers['webhook-id'] = `${id}x`;
          if (change === 'timestamp') headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) + 1);
          if (change === 'secret') s = newSecret();
          if (change === 'signature') headers['webhook-signature'] = `v1,${randomBytes(32).toString('base64')}`;
          const reference = (() => {
            try {
              new Webhook(s).verify(b, headers);
              return true;
            } catch {
              return false;
            }
          })();
          const ours = (() => {
            try {
              verifyWebhook(s, b, headers);
              return true;
            } catch (e) {
              assert.ok(e instanceof WebhookVerificationError);
              return false;
            }
          })();
          assert.equal(ours, reference, `${change} skew ${skew}`);
          assert.equal(ours, change === 'none' && Math.abs(skew) < 300);
        },
      ),
      { numRuns: 300 },
    );
  });
});
