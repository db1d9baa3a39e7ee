/**
 * OAuth 2.0 failures (RFC 6749 sections 4.1.2.1 and 5.2, RFC 7009, RFC 6750) as one class that
 * knows its wire behaviour: the error code, the HTTP status, extra headers, and whether the
 * authorization endpoint may send it back to the client's redirect URI. The OAuth HTTP plugin
 * renders every one of them; anything else becomes a bland `server_error`.
 */

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'slow_down'
  | 'server_error';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Whether the failure counts toward the caller address's limit of failed requests (issue
   * 13.1): every caller failure does, a 429 of a backoff included; the address's own refusal and
   * a busy server do not.
   */
  readonly countsAgainstAddress: boolean;

  constructor(error: OAuthErrorCode, description: string, status = 400, headers: Readonly<Record<string, string>> = {}, countsAgainstAddress = true) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = status;
    this.headers = headers;
    this.countsAgainstAddress = countsAgainstAddress;
  }

  toBody(): Record<string, string> {
    return { error: this.error, error_description: this.message };
  }
}

export const invalidRequest = (description: string): OAuthError => new OAuthError('invalid_request', description);
export const invalidGrant = (description: string): OAuthError => new OAuthError('invalid_grant', description);
export const invalidScope = (description: string): OAuthError => new OAuthError('invalid_scope', description);

/** RFC 6749 5.2: 401, and a Basic challenge when the client tried the Authorization header. */
export const invalidClient = (usedBasic: boolean): OAuthError =>
  new OAuthError('invalid_client', 'Client authentication failed', 401, usedBasic ? { 'www-authenticate': 'Basic realm="rollcall", charset="UTF-8"' } : {});

/** Too many attempts: 429 with the seconds to wait. `counts`: false for the address's own refusal. */
export const tooManyAttempts = (retryAfterSeconds: number, counts = true): OAuthError =>
  new OAuthError('slow_down', `Too many attempts; try again in ${retryAfterSeconds} seconds`, 429, { 'retry-after': String(retryAfterSeconds) }, counts);
