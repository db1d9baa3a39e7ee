/** The errors the client throws: every answer outside 2xx becomes a RollcallError. */
import type { OAuthErrorBody, ScimErrorBody } from './types.ts';

export class RollcallError extends Error {
  override readonly name: string = 'RollcallError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** RFC 7644 3.12 scimType (invalidFilter, uniqueness, ...), when the server sent one. */
  readonly scimType: string | undefined;
  /** RFC 7644 3.12 detail, or the OAuth error_description. */
  readonly detail: string | undefined;
  /** RFC 6749 5.2 `error` code (invalid_token, ...), for OAuth-shaped answers. */
  readonly oauthError: string | undefined;
  /** The parsed body (SCIM error, OAuth error, or whatever JSON the server sent). */
  readonly body: unknown;
  readonly headers: Headers;

  constructor(status: number, body: unknown, headers: Headers, method = '', url = '') {
    const scim = (body ?? {}) as ScimErrorBody & Partial<OAuthErrorBody>;
    const detail = typeof scim.detail === 'string' ? scim.detail : typeof scim.error_description === 'string' ? scim.error_description : undefined;
    const code = typeof scim.scimType === 'string' ? scim.scimType : typeof scim.error === 'string' ? scim.error : undefined;
    super(`${method} ${url}: HTTP ${status}${code ? ` ${code}` : ''}${detail ? `: ${detail}` : ''}`.trim());
    this.status = status;
    this.scimType = typeof scim.scimType === 'string' ? scim.scimType : undefined;
    this.oauthError = typeof scim.error === 'string' ? scim.error : undefined;
    this.detail = detail;
    this.body = body;
    this.headers = headers;
  }
}

/** 410 from the feed: the events after the position were pruned (re-read, follow from the latest seq). */
export class FeedPrunedError extends RollcallError {
  override readonly name: string = 'FeedPrunedError';
  /** The position asked for. */
  readonly after: number;
  constructor(after: number, cause: RollcallError) {
    super(cause.status, cause.body, cause.headers, 'GET', `/v2/events?after=${after}`);
    this.after = after;
  }
}

/**
 * A list walk (`iterate`) stopped because the server's paging made no progress: a `nextCursor`
 * it had already given, or an index page that adds nothing. Going on would loop for ever.
 */
export class PagingError extends Error {
  override readonly name: string = 'PagingError';
}

/** A webhook whose signature, timestamp or body does not verify. */
export class WebhookVerificationError extends Error {
  override readonly name: string = 'WebhookVerificationError';
}

/** A SET that does not verify (signature, typ, alg, issuer, audience or shape). */
export class SetVerificationError extends Error {
  override readonly name: string = 'SetVerificationError';
}
