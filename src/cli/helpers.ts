/**
 * What every command group of the CLI shares with index.ts: the options every command takes
 * (--database, --json), and the helpers a group registers its commands with. Types only.
 */
import type { Command } from 'commander';
import type { AdminDeps } from '../admin.ts';
import type { Config } from '../config.ts';

/** The options every command takes. */
export interface Common {
  database?: string;
  json?: boolean;
}

/** What index.ts hands each command group (events.ts, schema.ts). */
export interface CliHelpers {
  readonly withCommon: (command: Command) => Command;
  readonly withDatabase: <T>(options: Common, work: (deps: AdminDeps, config: Config) => Promise<T>) => Promise<T>;
  readonly print: (json: boolean | undefined, value: unknown, human: string) => void;
}
