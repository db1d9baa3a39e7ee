/**
 * Each team's budgets: the one place that states how much of the shared server one team may
 * spend (docs/SECURITY.md, "Budgets"). Every budget has a default here; the operator overrides it
 * per team (`rollcall team update --name N --limit NAME=VALUE`, shown by `team show` and the
 * console's settings), and the override is kept on the team's row (`teams.limits`, migration
 * 016), which the bearer check reads with the token, so a request carries its team's budgets
 * without another query.
 *
 * This module only states and parses budgets. Each is enforced where its resource is spent (the
 * filter planner, the statement deadline, the scan gate, subscriptions, schema registration,
 * discovery, delivery), which refuses by throwing `OverBudget`: protocol-neutral here, rendered
 * by each surface in its own shape (the SCIM error body on the SCIM, admin and events APIs, the
 * page's message in the console, a line on the CLI) and counted per team and budget in
 * Prometheus (`rollcall_budget_refusals_total`).
 */

export interface BudgetDefinition {
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly unit: string;
  readonly meaning: string;
}

export const BUDGETS = {
  'filter.cost': {
    default: 250_000,
    min: 1,
    max: 1_000_000_000,
    unit: 'row evaluations',
    meaning: "a filter's estimated cost, before it runs: its tests no index answers (a JSON read, a case fold, a pattern, an element or membership test) times the team's rows they are evaluated on, plus the recheck of each index range",
  },
  'statement.ms': {
    default: 5_000,
    min: 100,
    max: 60_000,
    unit: 'ms',
    meaning: "how long one database statement of the team's requests may run before it is interrupted",
  },
  'scans.concurrent': {
    default: 2,
    min: 1,
    max: 64,
    unit: 'requests',
    meaning: "the team's requests that may scan (a filter or sort no index answers) at the same time on one instance",
  },
  subscriptions: { default: 10, min: 0, max: 1_000, unit: 'subscriptions', meaning: 'event subscriptions (push and poll) the team may hold' },
  'ssf.streams': { default: 5, min: 0, max: 100, unit: 'streams', meaning: "SSF streams (push and poll) the team's receivers may hold, counted apart from subscriptions" },
  extensions: { default: 10, min: 0, max: 100, unit: 'schemas', meaning: 'extension schemas the team may register' },
  'extension.attributes': { default: 200, min: 0, max: 5_000, unit: 'attributes', meaning: 'attributes (sub-attributes included) over all of the team’s extension schemas' },
  'extension.bytes': { default: 262_144, min: 1_024, max: 4_194_304, unit: 'bytes', meaning: 'the size of all of the team’s extension schemas together, as JSON' },
  'indexed.attributes': { default: 5, min: 0, max: 50, unit: 'attributes', meaning: 'extension attributes that get a database index' },
  'discovery.bytes': { default: 1_048_576, min: 65_536, max: 16_777_216, unit: 'bytes', meaning: 'the size of the team’s /Schemas document' },
  'delivery.slots': { default: 2, min: 1, max: 32, unit: 'deliveries', meaning: "the team's push deliveries in flight at once on one instance" },
  'client.credentials': { default: 20, min: 0, max: 200, unit: 'credentials', meaning: "federated credentials and registered key sets (private_key_jwt) over all of the team's OAuth clients" },
  'catalog.entries': { default: 1_000, min: 0, max: 20_000, unit: 'entries', meaning: "roles, entitlement types and entitlements in the team's catalog together" },
  'access.mappings': { default: 1_000, min: 0, max: 20_000, unit: 'mappings', meaning: 'groups mapped to a role or an entitlement' },
  'receiver.ms': { default: 10_000, min: 1_000, max: 30_000, unit: 'ms', meaning: "how long one push delivery waits for the team's receiver" },
  'async.queued': { default: 100, min: 0, max: 10_000, unit: 'requests', meaning: "the team's asynchronous requests (Prefer: respond-async) waiting or running; over it a request is answered synchronously" },
  'async.bytes': { default: 67_108_864, min: 0, max: 1_073_741_824, unit: 'bytes', meaning: "the bodies of the team's asynchronous requests waiting or running, together" },
  'bulk.concurrent': { default: 2, min: 1, max: 16, unit: 'requests', meaning: "the team's Bulk requests (POST /Bulk) running at the same time on one instance" },
} as const satisfies Record<string, BudgetDefinition>;

export type BudgetName = keyof typeof BUDGETS;
export type Budgets = Readonly<Record<BudgetName, number>>;

export const BUDGET_NAMES = Object.keys(BUDGETS) as readonly BudgetName[];

export const DEFAULT_BUDGETS: Budgets = Object.freeze(Object.fromEntries(BUDGET_NAMES.map((n) => [n, BUDGETS[n].default])) as Record<BudgetName, number>);

export const isBudgetName = (name: string): name is BudgetName => Object.hasOwn(BUDGETS, name);

/**
 * A team's budget refused the request: 429 with a wait (`retryAfterSeconds`) when waiting will
 * do (a concurrency budget), 400 when the request itself is over (a filter's cost, a schema's
 * size). It names the team and the budget, which the metrics count per team (http/metrics.ts);
 * the message says what was over and is safe to show the client.
 */
export class OverBudget extends Error {
  readonly teamId: string;
  readonly budget: BudgetName;
  readonly retryAfterSeconds: number | undefined;

  constructor(teamId: string, budget: BudgetName, detail: string, retryAfterSeconds?: number) {
    super(detail);
    this.name = 'OverBudget';
    this.teamId = teamId;
    this.budget = budget;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  get status(): 400 | 429 {
    return this.retryAfterSeconds === undefined ? 400 : 429;
  }
}

/** A wrong `--limit` (or admin input): the message names the budget and what it takes. */
export class BudgetError extends Error {}

/** The overrides stored on a team's row: only known names with values in range count. */
export function overridesOf(limits: string | null | undefined): Partial<Record<BudgetName, number>> {
  if (!limits) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(limits);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const out: Partial<Record<BudgetName, number>> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (isBudgetName(name) && typeof value === 'number' && inRange(name, value)) out[name] = value;
  }
  return out;
}

/** A team's budgets: its overrides over the defaults. */
export function budgetsOf(team: { readonly limits?: string | null }): Budgets {
  if (!team.limits) return DEFAULT_BUDGETS;
  return { ...DEFAULT_BUDGETS, ...overridesOf(team.limits) };
}

const inRange = (name: BudgetName, value: number): boolean => Number.isSafeInteger(value) && value >= BUDGETS[name].min && value <= BUDGETS[name].max;

/** One change: a budget set to a value, or back to its default (`null`). */
export interface LimitChange {
  readonly name: BudgetName;
  readonly value: number | null;
}

/** Parses `NAME=VALUE` (VALUE an integer in the budget's range, or `default`). */
export function parseLimit(assignment: string): LimitChange {
  const at = assignment.indexOf('=');
  const name = (at < 0 ? assignment : assignment.slice(0, at)).trim();
  if (!isBudgetName(name)) throw new BudgetError(`unknown limit "${name}"; the limits are: ${BUDGET_NAMES.join(', ')}`);
  if (at < 0) throw new BudgetError(`--limit takes NAME=VALUE, e.g. ${name}=${BUDGETS[name].default}, or ${name}=default`);
  const raw = assignment.slice(at + 1).trim();
  if (raw === 'default') return { name, value: null };
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  const { min, max, unit } = BUDGETS[name];
  if (!inRange(name, value)) throw new BudgetError(`limit ${name} takes a whole number of ${unit} from ${min} to ${max}, or "default"; got "${raw}"`);
  return { name, value };
}

/** The stored overrides after the changes (NULL when none is left). */
export function applyLimits(limits: string | null | undefined, changes: readonly LimitChange[]): string | null {
  const next: Partial<Record<BudgetName, number>> = overridesOf(limits);
  for (const { name, value } of changes) {
    if (value === null || value === BUDGETS[name].default) delete next[name];
    else next[name] = value;
  }
  const names = BUDGET_NAMES.filter((n) => next[n] !== undefined);
  return names.length === 0 ? null : JSON.stringify(Object.fromEntries(names.map((n) => [n, next[n]])));
}

/** Every budget of a team, with whether the operator set it: what `team show` and the console list. */
export interface BudgetView {
  readonly name: BudgetName;
  readonly value: number;
  readonly default: number;
  readonly overridden: boolean;
  readonly unit: string;
  readonly meaning: string;
}

export function budgetViews(team: { readonly limits?: string | null }): BudgetView[] {
  const overrides = overridesOf(team.limits);
  return BUDGET_NAMES.map((name) => {
    const { default: fallback, unit, meaning } = BUDGETS[name];
    const value = overrides[name];
    return { name, value: value ?? fallback, default: fallback, overridden: value !== undefined, unit, meaning };
  });
}
