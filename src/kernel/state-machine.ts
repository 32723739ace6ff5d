// One transition table per resource: the single place that says which status may follow which.
// Operations ask the table instead of repeating their own allow-lists, so a new status is
// forbidden everywhere until the table says otherwise.
import { invalidState } from './errors.js';

export interface StateMachine<S extends string> {
  readonly objectName: string;
  can(from: S, to: S): boolean;
  /** Statuses from which `to` may be reached. */
  sourcesOf(to: S): S[];
  /** Throws a typed invalid_state error naming the current status and the allowed ones. */
  assert(from: S, to: S, operation: string): void;
}

export function defineStateMachine<S extends string>(objectName: string, table: Record<S, readonly S[]>): StateMachine<S> {
  const from = Object.keys(table) as S[];
  const sourcesOf = (to: S) => from.filter((s) => table[s].includes(to));
  return {
    objectName,
    can: (f, to) => table[f].includes(to),
    sourcesOf,
    assert(f, to, operation) {
      if (!table[f].includes(to)) throw invalidState(objectName, f, sourcesOf(to), operation);
    },
  };
}
