/** The shape every grant handler shares: an authenticated client and the form parameters in, tokens out. */
import type { ClientRow } from '../../storage/repos/clients.ts';
import type { OAuthContext } from '../context.ts';
import { invalidRequest } from '../errors.ts';
import type { GrantedTokens } from '../tokens.ts';

export type TokenParams = Readonly<Record<string, string>>;

export type GrantHandler = (ctx: OAuthContext, client: ClientRow, params: TokenParams) => Promise<GrantedTokens>;

/** A parameter the grant cannot do without (RFC 6749 5.2 invalid_request). */
export function required(params: TokenParams, name: string): string {
  const value = params[name];
  if (value === undefined || value === '') throw invalidRequest(`The ${name} parameter is required`);
  return value;
}
