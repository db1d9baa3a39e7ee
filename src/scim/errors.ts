/**
 * SCIM failures (RFC 7644 section 3.12) as one small class: status, scimType and a detail safe
 * to show the client. The SCIM HTTP plugin renders every one of them, and turns anything else
 * into a bland 500. Nothing here knows about HTTP frameworks.
 */
import type { BudgetName } from '../budgets.ts';
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
  | 'expiredCursor';

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
 * A team's budget refused the request (src/budgets.ts): 429 with `Retry-After` when waiting will
 * do (a concurrency budget), 400 when the request itself is over (a filter's cost, a schema's
 * size). It names the team and the budget, which the metrics count per team (http/metrics.ts).
 */
export class OverBudget extends ScimError {
  readonly budget: BudgetName;
  readonly teamId: string;

  constructor(teamId: string, budget: BudgetName, detail: string, retryAfterSeconds?: number) {
    super(
      retryAfterSeconds === undefined ? 400 : 429,
      detail,
      retryAfterSeconds === undefined ? 'invalidValue' : undefined,
      retryAfterSeconds === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    );
    this.name = 'OverBudget';
    this.budget = budget;
    this.teamId = teamId;
  }
}
