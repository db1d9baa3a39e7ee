/**
 * Time as a dependency: services ask the clock, tests inject one they can move. Timestamps are
 * ISO 8601 UTC with milliseconds, the contract's shape, and sort as text.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const iso = (clock: Clock): string => clock.now().toISOString();
