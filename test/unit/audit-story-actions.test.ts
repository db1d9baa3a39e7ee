/**
 * Every audit action has a sentence of its own in the audit story (console/audit-story.ts): none
 * is told by its raw name ("setup_link_created", "totp enabled"), whatever its detail holds; and
 * an action taken in the wizard a setup link opened says so, naming whom the link was sent to.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUDIT_ACTIONS } from '../../src/audit/events.ts';
import { storyOf, storyText } from '../../src/console/audit-story.ts';
import type { PageNames, RawAudit } from '../../src/console/audit-story.ts';

const RESOURCE_TYPES: Record<string, string> = {
  token_issued: 'Token',
  token_revoked: 'Token',
  grant_revoked: 'Token',
  team_updated: 'Team',
  exported: 'Team',
  application_revoked: 'Client',
  catalog_replaced: 'Catalog',
  catalog_schemas_set: 'Catalog',
};
const typeOf = (action: string): string =>
  RESOURCE_TYPES[action] ??
  (action.startsWith('client_') ? 'Client' : action.startsWith('subscription_') ? 'Subscription' : action.startsWith('stream_') ? 'Stream' : action.startsWith('schema_') ? 'Schema' : action.startsWith('connection_') ? 'Connection' : action.startsWith('setup_link_') ? 'SetupLink' : action.startsWith('role_') ? 'Role' : action.startsWith('entitlement_type_') ? 'ResourceType' : action.startsWith('entitlement_') || action.startsWith('access_') ? 'Entitlement' : 'User');

const names: PageNames = {
  users: new Map([['U1', 'admin@acme.example'], ['U2', 'ada@acme.example']]),
  groups: new Map([['G1', 'Engineering']]),
  clients: new Map(),
  tokens: new Map(),
  connections: new Map([['C1', 'Entra ID production']]),
  setupLinks: new Map([['L1', 'it@acme.example']]),
};

const row = (action: string, detail: Record<string, unknown>, actor: Record<string, unknown> = { via: 'console', clientId: null, userId: 'U1' }): RawAudit => ({
  id: 'E1',
  at: '2025-01-01T00:00:00.000Z',
  actor: JSON.stringify(actor),
  request_id: null,
  action,
  resource_type: typeOf(action),
  resource_id: action === 'catalog_replaced' || action === 'catalog_schemas_set' ? null : typeOf(action) === 'User' ? 'U2' : typeOf(action) === 'Connection' ? 'C1' : 'R1',
  detail: JSON.stringify(detail),
});

describe('the audit story has a sentence for every action', () => {
  for (const action of AUDIT_ACTIONS) {
    it(action, () => {
      for (const detail of [{}, { name: 'x', count: 3, left: 2, recipient: 'it@acme.example', group: 'G1', created: true }]) {
        const entry = storyOf(row(action, detail), names);
        const text = storyText(entry.story);
        assert.equal(entry.raw, undefined, `"${action}" is told by its raw name: ${text}`);
        assert.ok(!text.includes(action) || !action.includes('_'), `"${action}" appears raw: ${text}`);
        if (action.includes('_')) assert.ok(!text.includes(action.replace(/_/g, ' ')), `"${action}" is its raw name with spaces: ${text}`);
        assert.ok(!text.includes('_'), text);
      }
    });
  }

  it('an action in the wizard of a setup link is told as through the setup link for its recipient', () => {
    const entry = storyOf(row('connection_created', { name: 'Entra' }, { via: 'console', clientId: null, userId: null, setupLinkId: 'L1' }), names);
    assert.equal(storyText(entry.story), 'A colleague created connection Entra ID production through the setup link for it@acme.example');
    const used = storyOf({ ...row('setup_link_used', { recipient: 'it@acme.example' }, { via: 'console', clientId: null, userId: null, setupLinkId: 'L1' }), resource_id: 'L1' }, names);
    assert.equal(storyText(used.story), 'A colleague opened the setup link for it@acme.example');
  });

  it('sign-ins say how they were completed; a failed second factor is told as such', () => {
    const oauth = { via: 'oauth', clientId: null, userId: 'U2' };
    assert.equal(storyText(storyOf(row('sign_in', { method: 'form', secondFactor: 'totp' }, oauth), names).story), 'ada@acme.example signed in with a password and an authenticator app code');
    assert.equal(storyText(storyOf(row('second_factor_failed', { method: 'code' }, oauth), names).story), 'A second-factor check of ada@acme.example failed (a code)');
    assert.equal(storyText(storyOf(row('second_factors_reset', { passkeys: 1 }), names).story), 'admin@acme.example reset the second factors (passkeys, authenticator app, recovery codes) of user ada@acme.example in the console');
  });
});
