/**
 * A fake identity provider on 127.0.0.1 for the connection wizard's tests: it makes the first
 * request of a connection the way the provider's "Test Connection" does, with the values an
 * admin pasted from the wizard.
 *
 * - a token (Entra's Secret Token, Okta's HTTP Header, a generic client): a SCIM
 *   `GET /Users?filter=userName eq "<random>"` with `Authorization: Bearer`;
 * - client credentials (Entra gallery): a token from the token endpoint, then that query;
 * - workload identity federation (Entra gallery): an assertion signed by an EntraStandIn tenant
 *   (its keys served from a 127.0.0.1 JWKS), exchanged at the token endpoint, then that query;
 * - Okta's authorization code flow: the browser visits `/authenticate` here (Okta's
 *   "Authenticate with ..." button), which redirects to the authorization endpoint; the
 *   redirect comes back to `/admin/app/cpc/rollcall/oauth/callback`, where the code is exchanged
 *   at the token endpoint with the client id and secret, and the query is sent.
 *
 * Each answers what Rollcall answered, and the callback page says so, for the test to read.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EntraStandIn } from './entra-standin.ts';

export interface OktaOAuth {
  readonly authorizeEndpoint: string;
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: string;
  readonly scimBase: string;
}

/** The probe every provider's test sends: a userName nobody has. */
export const probePath = (): string => `/Users?filter=${encodeURIComponent(`userName eq "${randomUUID()}"`)}`;

const CLIENT_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export class FakeIdp {
  /** Okta's OAuth settings, once pasted (configure). */
  okta: OktaOAuth | undefined;
  /** The status of the last SCIM request Okta's callback made. */
  lastOktaStatus: number | undefined;
  readonly #server: Server;
  #origin = '';
  #state = '';

  private constructor() {
    this.#server = createServer((request, response) => void this.#answer(request.url ?? '/', response));
  }

  static async start(): Promise<FakeIdp> {
    const idp = new FakeIdp();
    await new Promise<void>((resolve) => idp.#server.listen(0, '127.0.0.1', resolve));
    idp.#origin = `http://127.0.0.1:${(idp.#server.address() as AddressInfo).port}`;
    return idp;
  }

  get origin(): string {
    return this.#origin;
  }

  /** Where Okta wants the authorization code sent (what the wizard's form asks for). */
  get oktaRedirectUri(): string {
    return `${this.#origin}/admin/app/cpc/rollcall/oauth/callback`;
  }

  /** A SCIM query with a bearer token; returns the status and body. */
  async scim(scimBase: string, token: string, path = probePath()): Promise<{ status: number; body: string }> {
    const res = await fetch(`${scimBase}${path}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/scim+json', 'user-agent': 'Fake IdP SCIM Client 1.0' } });
    return { status: res.status, body: await res.text() };
  }

  /** Entra's client credentials: a token, then the query. */
  async clientCredentials(tokenEndpoint: string, clientId: string, clientSecret: string, scimBase: string): Promise<number> {
    const token = await this.#token(tokenEndpoint, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    return (await this.scim(scimBase, token)).status;
  }

  /** Entra's workload identity federation: an assertion of `entra`'s tenant, a token, then the query. */
  async federated(entra: EntraStandIn, tokenEndpoint: string, clientId: string, scimBase: string): Promise<number> {
    const assertion = await entra.assertion({ audience: clientId });
    const token = await this.#token(tokenEndpoint, { grant_type: 'client_credentials', client_id: clientId, client_assertion_type: CLIENT_ASSERTION, client_assertion: assertion });
    return (await this.scim(scimBase, token)).status;
  }

  async #token(tokenEndpoint: string, form: Record<string, string>, authorization?: string): Promise<string> {
    const res = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      body: new URLSearchParams(form).toString(),
    });
    const body = (await res.json()) as { access_token?: string; error?: string };
    if (res.status !== 200 || typeof body.access_token !== 'string') throw new Error(`the token endpoint answered ${res.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  async #answer(url: string, response: import('node:http').ServerResponse): Promise<void> {
    const at = new URL(url, this.#origin);
    const page = (status: number, text: string) => {
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><title>Fake Okta</title></head><body><main><h1>Fake Okta</h1><p id="result">${text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)}</p></main></body></html>`);
    };
    const okta = this.okta;
    if (at.pathname === '/authenticate' && okta) {
      this.#state = randomUUID();
      const query = new URLSearchParams({ response_type: 'code', client_id: okta.clientId, redirect_uri: this.oktaRedirectUri, scope: okta.scopes, state: this.#state });
      response.writeHead(302, { location: `${okta.authorizeEndpoint}?${query.toString()}` });
      response.end();
      return;
    }
    if (at.pathname === '/admin/app/cpc/rollcall/oauth/callback' && okta) {
      const code = at.searchParams.get('code');
      if (!code || at.searchParams.get('state') !== this.#state) return page(400, `refused: ${at.searchParams.get('error') ?? 'no code, or another state'}`);
      try {
        const basic = `Basic ${Buffer.from(`${encodeURIComponent(okta.clientId)}:${encodeURIComponent(okta.clientSecret)}`).toString('base64')}`;
        const token = await this.#token(okta.tokenEndpoint, { grant_type: 'authorization_code', code, redirect_uri: this.oktaRedirectUri }, basic);
        const { status } = await this.scim(okta.scimBase, token);
        this.lastOktaStatus = status;
        return page(200, `Rollcall answered ${status}`);
      } catch (error) {
        return page(502, `failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    response.writeHead(404).end();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
