// The shape of an operator command (the tables in onboarding.ts and terms.ts): its arguments,
// checked before the database is opened, and the work it then does.
import type { Db } from '../storage/db.js';
import type { Config } from '../config.js';

export type OptionSpec = { type: 'string' | 'boolean'; short?: string };
export type Values = Record<string, string | boolean | undefined>;

export interface Prepared {
  /** Runs against the open (and migrated) database; the answer is printed as JSON. */
  run(db: Db, config?: Config): Promise<unknown>;
  /** Lines for people, printed on stderr after the result so stdout stays parseable JSON. */
  notes?(result: any): string[];
}

export interface Command {
  name: string;
  /** Positional arguments and options, as shown in the usage line. */
  synopsis: string;
  summary: string;
  details?: string;
  positionals: string[];
  options: Record<string, OptionSpec>;
  /** Validates everything and returns the work to do; never touches the database. */
  prepare(input: { values: Values; positionals: string[]; now: Date }): Prepared;
}
