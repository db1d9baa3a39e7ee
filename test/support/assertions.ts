/**
 * Client assertions for HTTP tests (RFC 7523 2.2): key pairs made with jose, a client's own
 * `private_key_jwt` assertions, and the token request that presents one.
 */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK, JWTPayload } from 'jose';
import { JWT_BEARER } from '../../src/oauth/assertion-auth.ts';
import type { TestApp } from './app.ts';
import { BASE_URL } from './app.ts';

export interface TestKeyPair {
  readonly alg: 'RS256' | 'PS256' | 'ES256';
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function keyPair(alg: TestKeyPair['alg'], members: Partial<JWK> = {}): Promise<TestKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomUUID();
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, ...members } };
}

export const jwksOf = (...keys: TestKeyPair[]): string => JSON.stringify({ keys: keys.map((k) => k.publicJwk) });

export const epoch = (t: TestApp): number => Math.floor(t.clock.now().getTime() / 1000);

/** A private_key_jwt assertion of `clientId` signed by `key`; `claims` replace the defaults (undefined removes). */
export async function clientAssertion(t: TestApp, key: TestKeyPair, clientId: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const now = epoch(t);
  const payload: Record<string, unknown> = { iss: clientId, sub: clientId, aud: `${BASE_URL}/oauth/token`, iat: now, exp: now + 300, jti: randomUUID() };
  for (const [name, value] of Object.entries(claims)) {
    if (value === undefined) delete payload[name];
    else payload[name] = value;
  }
  return new SignJWT(payload as JWTPayload).setProtectedHeader({ alg: key.alg, kid: key.kid, ...header } as { alg: string }).sign(key.privateKey);
}

/** A compact JWS built by hand: `alg: none`, or HMAC with a key of the test's choosing. */
export function handMadeJws(header: Record<string, unknown>, payload: Record<string, unknown>, sign: (input: string) => string): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${part(header)}.${part(payload)}`;
  return `${input}.${sign(input)}`;
}

/** POST `path` authenticated by `assertion` (no Authorization header), from `address`. */
export function postWithAssertion(
  t: TestApp,
  path: string,
  assertion: string,
  form: Record<string, string> = {},
  options: { address?: string; type?: string } = {},
): Promise<LightMyRequestResponse> {
  const params = new URLSearchParams({ ...form, client_assertion_type: options.type ?? JWT_BEARER, client_assertion: assertion });
  return t.app.inject({
    method: 'POST',
    url: path,
    ...(options.address !== undefined ? { remoteAddress: options.address } : {}),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: params.toString(),
  });
}
