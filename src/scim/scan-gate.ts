/**
 * The scans in progress on this instance, per team: one per app (passed in the SCIM context), so
 * apps in one process (tests) never share places.
 */
export class ScanGate {
  readonly #held = new Map<string, number>();

  /** A place for one of `teamId`'s scans when it holds fewer than `limit`: the function that gives it back. */
  enter(teamId: string, limit: number): (() => void) | undefined {
    const held = this.#held.get(teamId) ?? 0;
    if (held >= limit) return undefined;
    this.#held.set(teamId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(teamId) ?? 1) - 1;
      if (left === 0) this.#held.delete(teamId);
      else this.#held.set(teamId, left);
    };
  }

  /** The team's scans in progress. */
  held(teamId: string): number {
    return this.#held.get(teamId) ?? 0;
  }
}
