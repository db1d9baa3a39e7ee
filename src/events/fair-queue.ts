/**
 * The push worker's schedule: which subscription gets the next delivery slot.
 * Each team has its own queue of subscriptions waiting for a turn; a turn delivers one SET, then
 * the subscription goes to the back of its team's queue. Teams are served round robin (the team
 * served longest ago first), and a team never has more than its `slots` turns in flight, so a
 * team with many subscriptions, a long backlog or slow receivers spends its own share of the
 * instance and no more: another team's next event waits at most one turn per team ahead of it.
 *
 * A plain data structure: no timers, no I/O, one per worker (never module state).
 */

interface TeamQueue<T> {
  readonly waiting: T[];
  inFlight: number;
  slots: number;
}

export interface Turn<T> {
  readonly teamId: string;
  readonly item: T;
}

export class FairQueue<T> {
  readonly #teams = new Map<string, TeamQueue<T>>();
  /** Team ids, the one served longest ago first. */
  #ring: string[] = [];
  #inFlight = 0;

  /** Turns in flight over every team. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The team's slots (its `delivery.slots` budget); applies from its next turn. */
  setSlots(teamId: string, slots: number): void {
    this.#team(teamId).slots = Math.max(1, slots);
  }

  /** Puts a subscription at the back of its team's queue. */
  push(teamId: string, item: T): void {
    this.#team(teamId).waiting.push(item);
  }

  /**
   * The next turn: the front of the queue of the first team, in round-robin order, that has one
   * waiting and a free slot; that team moves to the end of the ring. Undefined when none may go.
   */
  take(): Turn<T> | undefined {
    for (let i = 0; i < this.#ring.length; i++) {
      const teamId = this.#ring[i]!;
      const team = this.#teams.get(teamId)!;
      if (team.waiting.length === 0 || team.inFlight >= team.slots) continue;
      team.inFlight += 1;
      this.#inFlight += 1;
      this.#ring.splice(i, 1);
      this.#ring.push(teamId);
      return { teamId, item: team.waiting.shift()! };
    }
    return undefined;
  }

  /** A turn of the team ended (its item pushed back first if it goes on). */
  done(teamId: string): void {
    const team = this.#teams.get(teamId);
    if (!team) return;
    team.inFlight -= 1;
    this.#inFlight -= 1;
    this.#forgetIfIdle(teamId, team);
  }

  /** Empties every queue (turns in flight are still counted until `done`), answering what waited. */
  drain(): T[] {
    const all: T[] = [];
    for (const [teamId, team] of this.#teams) {
      all.push(...team.waiting.splice(0));
      this.#forgetIfIdle(teamId, team);
    }
    return all;
  }

  #team(teamId: string): TeamQueue<T> {
    let team = this.#teams.get(teamId);
    if (!team) {
      team = { waiting: [], inFlight: 0, slots: 1 };
      this.#teams.set(teamId, team);
      this.#ring.push(teamId);
    }
    return team;
  }

  #forgetIfIdle(teamId: string, team: TeamQueue<T>): void {
    if (team.inFlight > 0 || team.waiting.length > 0) return;
    this.#teams.delete(teamId);
    this.#ring = this.#ring.filter((id) => id !== teamId);
  }
}
