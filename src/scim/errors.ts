/**
 * SCIM failures (RFC 7644 section 3.12) as one small class: status, scimType and a detail safe
 * to show the client. The SCIM HTTP plugin renders every one of them, and turns anything else
 * into a bland 500. Nothing here knows about HTTP frameworks.
 */
import { OverBudget } from '../budgets.ts';
import { EventsError } from '../events/errors.ts';
import { ERROR_SCHEMA } from './schema/urns.ts';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive'
  | 'invalidCursor'
  | 'expiredCursor'
  /** draft-sehgal-scim-delta-query: a delta token whose changes are no longer kept (scim/delta.ts). */
  | 'expiredDeltaToken';

export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    detail: string,
    scimType?: ScimType,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'ScimError';
    this.status = status;
    this.scimType = scimType;
    this.headers = headers;
  }

  toBody(): Record<string, unknown> {
    return {
      schemas: [ERROR_SCHEMA],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.message,
    };
  }
}

export const badRequest = (scimType: ScimType, detail: string): ScimError =>
  new ScimError(400, detail, scimType);

export const notFound = (detail: string): ScimError => new ScimError(404, detail);

export const conflict = (detail: string): ScimError => new ScimError(409, detail, 'uniqueness');

export const preconditionFailed = (detail: string): ScimError => new ScimError(412, detail);

/**
 * The SCIM error for a failure raised below the SCIM layer, in the shape the SCIM surfaces (the
 * SCIM, admin and events APIs, the console, the CLI) show it; undefined for anything else. A
 * budget's refusal (budgets.ts) is 429 with `Retry-After` when waiting will do, else 400
 * invalidValue; an events failure (events/errors.ts) keeps its status and code.
 */
export function scimErrorOf(error: unknown): ScimError | undefined {
  if (error instanceof ScimError) return error;
  if (error instanceof OverBudget) {
    const wait = error.retryAfterSeconds;
    return wait === undefined
      ? new ScimError(400, error.message, 'invalidValue')
      : new ScimError(429, error.message, undefined, { 'retry-after': String(Math.max(1, Math.ceil(wait))) });
  }
  if (error instanceof EventsError) return new ScimError(error.status, error.message, error.code);
  return undefined;
}
