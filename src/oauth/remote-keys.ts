/**
 * Public keys published on the web (RFC 7517 JWK Sets) that client assertions are verified
 * against (RFC 7523): a client's `jwks_uri`, or the keys of an external issuer such as Entra ID,
 * found through its `/.well-known/openid-configuration`. This is the contract between the
 * assertion checks (which keys may sign for whom) and the fetcher (how keys are fetched, cached
 * and refreshed, and which hosts may be reached).
 */
import type { JSONWebKeySet } from 'jose';

/** Where a key set is published: a JWKS URL, or an issuer whose OpenID configuration names one. */
export type KeySource = { readonly jwksUri: string } | { readonly issuer: string };

export interface RemoteKeys {
  /**
   * The key set of `source`, served from the cache while it is fresh. When `kid` is given and no
   * key of the cached set has it, the set is fetched again (at most once a minute per source) so
   * that a rotated key is found; within that minute the cached set answers, and the caller's
   * verification fails. When a refetch fails, the previous set may answer (stale, for a bounded
   * time). Only public RSA and EC keys are in the set; the caller still checks each key's `use`
   * and `alg`. Rejects with KeyFetchFailed when no key set can be had.
   */
  keySet(source: KeySource, kid: string | undefined): Promise<JSONWebKeySet>;
}

/** No key set could be had: its reason is for the operator's log, never for the client. */
export class KeyFetchFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyFetchFailed';
  }
}
