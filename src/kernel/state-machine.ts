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
  };
}
