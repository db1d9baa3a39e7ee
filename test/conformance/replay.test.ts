/**
 * Replays recorded identity-provider conversations (IDP-DIALECTS.md) against a fresh Rollcall:
 * each fixture is a sequence of requests with the status and body fields that provider expects.
 * `{name}` in a path or body is replaced by a value captured from an earlier response.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { createConnection } from '../../src/oauth/connections.ts';
import { issueProvisioningToken } from '../../src/oauth/provisioning.ts';
import { createTestApp } from '../support/app.ts';

interface Step {
  readonly id: string;
  readonly note?: string;
  readonly request: { readonly method: string; readonly path: string; readonly body?: unknown; readonly headers?: Record<string, string> };
  readonly expect: {
    readonly status: number;
    /** Slash-separated paths into the response body (`name/familyName`, `Resources/0/id`) and their values. */
    readonly fields?: Record<string, unknown>;
    /** Slash-separated paths that must be absent. */
    readonly absent?: readonly string[];
    readonly headers?: Record<string, string>;
    readonly emptyBody?: boolean;
  };
  /** Names for values of this response, by slash-separated path, for later steps. */
  readonly capture?: Record<string, string>;
}

interface Fixture {
  readonly provider: string;
  readonly source: string;
  readonly team?: { readonly deactivatedUsers?: 'hidden' | 'visible' };
  /** Schema extensions the team registers first (issue 11), as POST /v2/admin/Schemas takes them. */
  readonly extensions?: readonly unknown[];
  readonly steps: readonly Step[];
}

const dir = join(import.meta.dirname, 'fixtures');

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

/** `{name}` placeholders in strings, recursively; a string that is exactly `{name}` keeps its type. */
function substitute(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = /^\{(\w+)\}$/.exec(value);
    if (whole && whole[1]! in vars) return vars[whole[1]!];
    return value.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [substitute(k, vars) as string, substitute(v, vars)]));
  }
  return value;
}

for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const fixture = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture;
  describe(`${fixture.provider} (${file})`, () => {
    it(`replays ${fixture.steps.length} recorded requests (${fixture.source})`, async () => {
      const t = await createTestApp(fixture.team?.deactivatedUsers ? { deactivatedUsers: fixture.team.deactivatedUsers } : {});
      const vars: Record<string, unknown> = {};
      try {
        for (const extension of fixture.extensions ?? []) {
          const res = await t.request('POST', '/v2/admin/Schemas', extension);
          assert.equal(res.statusCode, 201, `registering an extension: ${res.body}`);
        }
        // The provider talks as a connection does (its own token, as the guides and the wizard
        // set it up), so the rules for a connection's writes apply to the recorded traffic.
        const connection = await createConnection(t.storage, t.clock, { teamId: t.team.id, name: fixture.provider.slice(0, 100), actor: CLI_ACTOR, requestId: null });
        const issued = await issueProvisioningToken(t.storage, t.clock, { teamId: t.team.id, connectionId: connection.id, name: 'replay', scope: ['read', 'write'], ttlSeconds: 86_400, actor: CLI_ACTOR, requestId: null });
        const asConnection = { authorization: `Bearer ${issued.token}` };
        for (const step of fixture.steps) {
          const label = `${step.id}${step.note ? ` (${step.note})` : ''}`;
          const path = substitute(step.request.path, vars) as string;
          const url = `/v2/scim${path.replace(/ /g, '%20').replace(/"/g, '%22')}`;
          const body = step.request.body === undefined ? undefined : substitute(step.request.body, vars);
          const res = await t.request(step.request.method, url, body, { ...asConnection, ...(substitute(step.request.headers ?? {}, vars) as Record<string, string>) });
          assert.equal(res.statusCode, step.expect.status, `${label}: status; body ${res.body}`);
          const parsed: unknown = res.body === '' ? undefined : JSON.parse(res.body);
          if (step.expect.emptyBody) assert.equal(res.body, '', `${label}: empty body`);
          for (const [field, expected] of Object.entries(step.expect.fields ?? {})) {
            assert.deepEqual(at(parsed, field), substitute(expected, vars), `${label}: ${field} in ${res.body}`);
          }
          for (const field of step.expect.absent ?? []) {
            assert.equal(at(parsed, field), undefined, `${label}: ${field} must be absent in ${res.body}`);
          }
          for (const [name, expected] of Object.entries(step.expect.headers ?? {})) {
            assert.equal(res.headers[name.toLowerCase()], expected, `${label}: header ${name}`);
          }
          for (const [name, field] of Object.entries(step.capture ?? {})) {
            vars[name] = at(parsed, field);
            assert.notEqual(vars[name], undefined, `${label}: capture ${name} from ${field}`);
          }
        }
      } finally {
        await t.close();
      }
    });
  });
}
