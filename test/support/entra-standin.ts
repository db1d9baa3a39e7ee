/**
 * A local stand-in for Microsoft Entra ID on 127.0.0.1 (port 0), for the workload identity
 * federation tests: a tenant's OpenID configuration at `/{tenantId}/v2.0/.well-known/openid-configuration`
 * (issuer `http://127.0.0.1:PORT/{tenantId}/v2.0`), its JWKS at `/{tenantId}/discovery/v2.0/keys`,
 * RSA signing keys made with jose that it can rotate (a new `kid`, the old key gone), and
 * assertions shaped like the ones Entra's provisioning service sends (header RS256 with `kid` and
 * `x5t`; claims `aud` a bare application id, `iss`, `sub` an object id, `uti`, `tid`, `azp`,
 * `oid`, `ver`, `iat`, `nbf`, `exp` 60 to 90 minutes after `iat`). It can be told to misbehave:
 * hang, answer 5 MB, redirect, fail, or publish its key for encryption only. It counts the
 * requests it serves. Times come from the test's clock.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK, JWTPayload } from 'jose';

export type Misbehaviour = 'hang' | 'huge' | 'redirect' | 'fail' | 'encryption-key' | null;

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

async function newKey(tenantIssuer: () => string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  // Entra's kid and x5t are the base64url SHA-1 thumbprint of the key's certificate.
  const kid = base64url(createHash('sha1').update(randomBytes(32)).digest());
  const jwk = await exportJWK(publicKey);
  return { kid, privateKey, publicJwk: { ...jwk, kty: 'RSA', use: 'sig', kid, x5t: kid, issuer: tenantIssuer() } as JWK };
}

export interface EntraAssertionOptions {
  /** `aud`: the application (client) id, bare as Entra sends it. */
  readonly audience: string;
  /** Claims replacing or adding to Entra's (undefined values remove a claim). */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** Header members replacing Entra's. */
  readonly header?: Readonly<Record<string, unknown>>;
  /** Seconds from `iat` to `exp` (Entra: 3600 to 5400). */
  readonly lifetimeSeconds?: number;
  /** Seconds added to the clock for `iat` and `nbf` (negative: issued in the past). */
  readonly issuedInSeconds?: number;
}

export class EntraStandIn {
  readonly tenantId = randomUUID();
  /** The object id of the provisioning service's workload identity: the assertions' `sub`. */
  readonly objectId = randomUUID();
  /** The `azp`/`appid` of Entra's provisioning service. */
  readonly servicePrincipalAppId = randomUUID();
  misbehaviour: Misbehaviour = null;
  /** Requests served per path. */
  readonly served = new Map<string, number>();
  readonly #server: Server;
  readonly #now: () => Date;
  readonly #held = new Set<ServerResponse>();
  #port = 0;
  #key!: SigningKey;

  private constructor(now: () => Date) {
    this.#now = now;
    this.#server = createServer((request, response) => this.#answer(request.url ?? '/', response));
  }

  /** Starts a stand-in whose tokens are stamped with `now()` (the test app's clock). */
  static async start(now: () => Date): Promise<EntraStandIn> {
    const standIn = new EntraStandIn(now);
    await new Promise<void>((resolve) => standIn.#server.listen(0, '127.0.0.1', resolve));
    standIn.#port = (standIn.#server.address() as AddressInfo).port;
    standIn.#key = await newKey(() => standIn.issuer);
    return standIn;
  }

  get issuer(): string {
    return `http://127.0.0.1:${this.#port}/${this.tenantId}/v2.0`;
  }

  get jwksUri(): string {
    return `http://127.0.0.1:${this.#port}/${this.tenantId}/discovery/v2.0/keys`;
  }

  get kid(): string {
    return this.#key.kid;
  }

  /** The published key set. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.#key.publicJwk] };
  }

  /** A new signing key with a new kid; the old one is no longer published nor used. */
  async rotate(): Promise<void> {
    this.#key = await newKey(() => this.issuer);
  }

  /** A key that is not (yet) published: what a signer with an unknown kid holds. */
  async unpublishedSigner(): Promise<(options: EntraAssertionOptions) => Promise<string>> {
    const key = await newKey(() => this.issuer);
    return (options) => this.#sign(key, options);
  }

  /** An assertion as Entra's provisioning service sends it to a token endpoint. */
  assertion(options: EntraAssertionOptions): Promise<string> {
    return this.#sign(this.#key, options);
  }

  /** Entra's claims for `options`, before signing (tests that sign otherwise use them). */
  claims(options: EntraAssertionOptions): JWTPayload {
    const iat = Math.floor(this.#now().getTime() / 1000) + (options.issuedInSeconds ?? 0);
    const claims: Record<string, unknown> = {
      aud: options.audience,
      iss: this.issuer,
      iat,
      nbf: iat,
      exp: iat + (options.lifetimeSeconds ?? 4500),
      aio: base64url(randomBytes(48)),
      azp: this.servicePrincipalAppId,
      azpacr: '2',
      idtyp: 'app',
      oid: this.objectId,
      rh: `0.${base64url(randomBytes(40))}.`,
      sub: this.objectId,
      tid: this.tenantId,
      uti: base64url(randomBytes(16)),
      ver: '2.0',
      xms_ftd: base64url(randomBytes(40)),
    };
    for (const [name, value] of Object.entries(options.claims ?? {})) {
      if (value === undefined) delete claims[name];
      else claims[name] = value;
    }
    return claims as JWTPayload;
  }

  async #sign(key: SigningKey, options: EntraAssertionOptions): Promise<string> {
    return new SignJWT(this.claims(options)).setProtectedHeader({ typ: 'JWT', alg: 'RS256', x5t: key.kid, kid: key.kid, ...options.header } as { alg: string }).sign(key.privateKey);
  }

  #answer(url: string, response: ServerResponse): void {
    const path = url.split('?')[0]!;
    this.served.set(path, (this.served.get(path) ?? 0) + 1);
    const tenant = `/${this.tenantId}`;
    const json = (body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'max-age=86400, private', ...headers });
      response.end(JSON.stringify(body));
    };
    const mode = this.misbehaviour;
    if (mode === 'hang') {
      this.#held.add(response);
      return;
    }
    if (mode === 'fail') {
      response.writeHead(503, { 'content-type': 'text/plain' });
      response.end('unavailable');
      return;
    }
    if (mode === 'huge') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`{"keys":[],"padding":"${'x'.repeat(5 * 1024 * 1024)}"}`);
      return;
    }
    if (mode === 'redirect' && !path.startsWith('/moved/')) {
      response.writeHead(302, { location: `http://127.0.0.1:${this.#port}/moved${path}` });
      response.end();
      return;
    }
    const own = path.startsWith('/moved/') ? path.slice('/moved'.length) : path;
    if (own === `${tenant}/v2.0/.well-known/openid-configuration`) {
      json({
        issuer: this.issuer,
        token_endpoint: `http://127.0.0.1:${this.#port}/${this.tenantId}/oauth2/v2.0/token`,
        jwks_uri: this.jwksUri,
        id_token_signing_alg_values_supported: ['RS256'],
        subject_types_supported: ['pairwise'],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      });
      return;
    }
    if (own === `${tenant}/discovery/v2.0/keys`) {
      const keys = mode === 'encryption-key' ? [{ ...this.#key.publicJwk, use: 'enc' }] : [this.#key.publicJwk];
      json({ keys });
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":"not_found"}');
  }

  async close(): Promise<void> {
    for (const held of this.#held) held.destroy();
    this.#held.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
