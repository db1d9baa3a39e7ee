/**
 * What the authorization server's operations need, built once by the app factory: storage, the
 * clock, token lifetimes, the brute-force limits and the configuration switches. Nothing is
 * looked up globally.
 */
import type { Clock } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import type { ClientCache } from './client-cache.ts';
import type { Limits } from './limits.ts';
import type { PasswordHasher } from './passwords.ts';
import type { RemoteKeys } from './remote-keys.ts';
import type { TokenLifetimes } from './tokens.ts';

export interface OAuthContext {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly lifetimes: TokenLifetimes;
  readonly limits: Limits;
  /** The app's one bounded scrypt queue, shared with SCIM writes. */
  readonly passwords: PasswordHasher;
  /** Whether grant_type=password is offered (PASSWORD_GRANT). */
  readonly passwordGrant: boolean;
  /** The issuer: PUBLIC_BASE_URL (RFC 8414 2). */
  readonly issuer: string;
  /** Clients as the token endpoint authenticates them, kept briefly (client-cache.ts). */
  readonly clients: ClientCache;
  /** Key sets on the web that client assertions are verified against (remote-keys.ts). */
  readonly remoteKeys: RemoteKeys;
}

/** Codes live 60 seconds (RFC 6749 4.1.2 recommends at most 10 minutes). */
export const CODE_TTL_SECONDS = 60;
