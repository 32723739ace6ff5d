// One transition table per resource: the single place that says which status may follow which,
// and the named groups of statuses the rest of the code asks about ("awaiting the processor",
// "refundable"). Operations ask the table instead of repeating their own allow-lists or comparing
// literal statuses, so a new status is forbidden everywhere until the table says otherwise.
import { invalidState } from './errors.js';

export interface StateMachine<S extends string, G extends string = never> {
  readonly objectName: string;
  /** Whether `status` belongs to the named group. */
  is(status: string, group: G): boolean;
  /** Throws a typed invalid_state error unless `status` belongs to the named group. */
  require(status: S, group: G, operation: string): void;
  can(from: S, to: S): boolean;
  /** Statuses from which `to` may be reached. */
  sourcesOf(to: S): S[];
  /** Throws a typed invalid_state error naming the current status and the allowed ones. */
  assert(from: S, to: S, operation: string): void;
  /**
   * The move from → to for a statement written once at module load (the one-statement paths):
   * a table without that move stops the module from loading instead of leaving SQL behind that
   * still makes it.
   */
  edge<F extends S, T extends S>(from: F, to: T): { from: F; to: T };
}

export function defineStateMachine<S extends string, G extends string = never>(
  objectName: string,
  table: Record<S, readonly S[]>,
  groups: Record<G, readonly S[]> = {} as Record<G, readonly S[]>,
): StateMachine<S, G> {
  const from = Object.keys(table) as S[];
  const sourcesOf = (to: S) => from.filter((s) => table[s].includes(to));
  const is = (status: string, group: G) => (groups[group] as readonly string[]).includes(status);
  return {
    objectName,
    is,
    require(status, group, operation) {
      if (!is(status, group)) throw invalidState(objectName, status, [...groups[group]], operation);
    },
    can: (f, to) => table[f].includes(to),
    sourcesOf,
    assert(f, to, operation) {
      if (!table[f].includes(to)) throw invalidState(objectName, f, sourcesOf(to), operation);
    },
    edge(f, to) {
      if (!table[f].includes(to)) throw new Error(`the ${objectName} state table has no move ${f} → ${to}`);
      return { from: f, to };
    },
  };
}

const STATUS_WORD = /^[a-z_]+$/;

/** A status as an SQL literal; statuses are lower-case words (checked), so nothing needs escaping. */
export function sqlStatus(status: string): string {
  if (!STATUS_WORD.test(status)) throw new Error(`not a status: ${status}`);
  return `'${status}'`;
}

/** `column = 'a'`, or `column IN ('a', 'b')`: a condition on statuses taken from a state table. */
export function sqlStatusIn(statuses: readonly string[], column = 'status'): string {
  if (statuses.length === 0) throw new Error('a status condition needs at least one status');
  return statuses.length === 1 ? `${column} = ${sqlStatus(statuses[0]!)}` : `${column} IN (${statuses.map(sqlStatus).join(', ')})`;
}
