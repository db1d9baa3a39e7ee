/**
 * The configuration contract (DESIGN.md section 6): defaults, flags over environment, and one
 * clear line naming the setting for every bad value.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, loadServeConfig } from '../../src/config.ts';

describe('configuration', () => {
  it('defaults: SQLite file, 127.0.0.1:8080, one-hour tokens, password grant on, no Redis, no proxy', () => {
    const c = loadConfig({}, {});
    assert.equal(c.databaseUrl, 'sqlite:./data/rollcall.db');
    assert.equal(c.publicBaseUrl, 'http://127.0.0.1:8080');
    assert.equal(c.accessTokenTtl, 3600);
    assert.equal(c.refreshTokenTtl, 2_592_000);
    assert.equal(c.passwordGrant, true);
    assert.equal(c.redisUrl, undefined);
    assert.equal(c.trustProxy, false);
  });

  it('flags override the environment; settings are read from it', () => {
    const c = loadConfig({ port: '9090' }, { PORT: '7070', PASSWORD_GRANT: 'off', TRUST_PROXY: 'on', REDIS_URL: 'redis://127.0.0.1:6379', PUBLIC_BASE_URL: 'https://scim.example/' });
    assert.equal(c.port, 9090);
    assert.equal(c.passwordGrant, false);
    assert.equal(c.trustProxy, 1, 'on means one proxy hop, never "believe the left-most entry"');
    assert.equal(c.redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(c.publicBaseUrl, 'https://scim.example');
  });

  it('a bad value is one line naming the setting', () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: 'eighty' }, 'PORT: expected a whole number, got "eighty"'],
      [{ ACCESS_TOKEN_TTL: '5' }, 'ACCESS_TOKEN_TTL: expected 60..86400, got 5'],
      [{ PASSWORD_GRANT: 'maybe' }, 'PASSWORD_GRANT: expected on or off, got "maybe"'],
      [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY: expected off, on (one proxy), a hop count 1..10, or proxy addresses/CIDRs separated by commas; "yes" is none of these'],
      [{ TRUST_PROXY: '11' }, 'TRUST_PROXY: expected 0..10, got 11'],
      [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY: expected off, on (one proxy), a hop count 1..10, or proxy addresses/CIDRs separated by commas; "10.0.0.0/33" is none of these'],
      [{ TRUST_PROXY: '10.0.0.1,,10.0.0.2' }, 'TRUST_PROXY: expected off, on (one proxy), a hop count 1..10, or proxy addresses/CIDRs separated by commas; "" is none of these'],
      [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL: expected redis://..., got "localhost:6379"'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL: expected sqlite:<path> or postgres://..., got "mysql://x"'],
      [{ PUBLIC_BASE_URL: 'ftp://x' }, 'PUBLIC_BASE_URL: expected an http(s) URL, got "ftp://x"'],
      [{ SECRET_KEY: 'too short' }, 'SECRET_KEY: expected at least 32 characters (e.g. from openssl rand -base64 32), got 9'],
    ];
    for (const [env, message] of cases) {
      assert.throws(() => loadConfig({}, env), (e: unknown) => e instanceof ConfigError && e.message === message, message);
    }
  });

  it('a server on PostgreSQL needs PUBLIC_BASE_URL (its events\' issuer, the same on every instance); on SQLite it defaults', () => {
    const pg = 'postgres://rollcall@db.example/rollcall';
    assert.throws(() => loadServeConfig({}, { DATABASE_URL: pg }), (e: unknown) => e instanceof ConfigError && e.message.startsWith('PUBLIC_BASE_URL: required with PostgreSQL'));
    assert.equal(loadServeConfig({ publicBaseUrl: 'https://scim.example' }, { DATABASE_URL: pg }).publicBaseUrl, 'https://scim.example');
    assert.equal(loadServeConfig({}, { DATABASE_URL: pg, PUBLIC_BASE_URL: 'https://scim.example/' }).publicBaseUrl, 'https://scim.example');
    assert.equal(loadServeConfig({}, {}).publicBaseUrl, 'http://127.0.0.1:8080');
    assert.equal(loadConfig({}, { DATABASE_URL: pg }).publicBaseUrl, 'http://127.0.0.1:8080', 'commands other than serve sign nothing');
  });

  it('13.6: TRUST_PROXY takes off, on (one hop), a hop count, or proxy addresses and CIDR ranges', () => {
    const proxy = (value: string) => loadConfig({}, { TRUST_PROXY: value }).trustProxy;
    assert.equal(proxy('off'), false);
    assert.equal(proxy('0'), false);
    assert.equal(proxy('ON'), 1);
    assert.equal(proxy('2'), 2);
    assert.deepEqual(proxy('10.0.0.0/8, 192.168.0.1'), ['10.0.0.0/8', '192.168.0.1']);
    assert.deepEqual(proxy('fd00::/8,::1,loopback'), ['fd00::/8', '::1', 'loopback']);
  });

  it('ALLOW_RECEIVERS: none by default; addresses, CIDR ranges and host names, each optionally with one port', () => {
    assert.deepEqual(loadConfig({}, {}).allowReceivers, []);
    const allowed = (value: string) => loadConfig({}, { ALLOW_RECEIVERS: value }).allowReceivers;
    assert.deepEqual(allowed('127.0.0.1, [::1]:8443, 10.0.0.0/8, fd00::/8, ::1, Hooks.Internal:9000, localhost'), [
      { kind: 'network', address: '127.0.0.1', prefix: 32, family: 4 },
      { kind: 'network', address: '::1', prefix: 128, family: 6, port: 8443 },
      { kind: 'network', address: '10.0.0.0', prefix: 8, family: 4 },
      { kind: 'network', address: 'fd00::', prefix: 8, family: 6 },
      { kind: 'network', address: '::1', prefix: 128, family: 6 },
      { kind: 'name', name: 'hooks.internal', port: 9000 },
      { kind: 'name', name: 'localhost' },
    ]);
    assert.deepEqual(allowed('127.0.0.1:8443'), [{ kind: 'network', address: '127.0.0.1', prefix: 32, family: 4, port: 8443 }]);
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/8:443', '127.0.0.1:0', '127.0.0.1:70000', 'a b', '999.1.1.1', 'http://x', '[::1', 'host:port']) {
      assert.throws(() => allowed(bad), (e: unknown) => e instanceof ConfigError && e.message.startsWith('ALLOW_RECEIVERS: expected addresses, CIDR ranges or host names') && e.message.includes(`"${bad}"`), bad);
    }
  });
});
