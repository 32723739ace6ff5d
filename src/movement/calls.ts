// Phase 2 of every movement: the calls to its connectors, made with no transaction open.
//
// routeCall tries the route in order. A retryable failure (the processor answered with an error,
// the connection was refused, or it did not open in time) moves on to the next connector; a
// refusal, a success, a pending answer or a timeout after the request went out stops: the
// processor may have acted, and sending elsewhere could move the money twice. A connector whose
// circuit is open is skipped. Every call, and every skip, becomes an attempt.
//
// locate asks the connectors of the route whether one already holds the movement — what a
// resumed request or the worker does before sending again, so that a crash between the phases
// never moves money twice, not even on another connector. A connector that cannot be asked but
// replays sends under the same key (Adyen) is asked by sending again, to it alone.
import { attemptOf, callConnector, connectorThatMayHaveActed, resolveConnector, type Attempt, type CallDeps, type Guarded } from '../connectors/router.js';
import { connectorError, isRetryable, type ConnectorError } from '../connectors/types.js';
import { referenceOf, type AnyKind, type Execution } from './kind.js';

export type { Execution } from './kind.js';
import type { Executor } from '../storage/db.js';
import type { MovementRow } from './row.js';


/** The attempt record of one guarded call, read in the kind's words. */
export function attemptFor(kind: AnyKind, name: string, guarded: Guarded<{ kind: string }>): Attempt {
  if ('skipped' in guarded || guarded.result.kind === 'error' || guarded.result.kind === 'not_found') return attemptOf(name, guarded);
  return attemptOf(name, { ...guarded, result: kind.attempt(guarded.result) });
}

export async function routeCall<S extends { kind: string }>(call: CallDeps, kind: AnyKind, plan: readonly string[], request: unknown): Promise<Execution<S>> {
  const attempts: Attempt[] = [];
  let last: S | ConnectorError = connectorError('processor_error', 'every connector of the route is unavailable (circuit open)');
  let unreached = true;
  for (const name of plan) {
    const guarded = await callConnector<S>(call, name, (connector, signal) => kind.send(connector, request, signal), `${kind.object}.send`);
    attempts.push(attemptFor(kind, name, guarded));
    if ('skipped' in guarded) continue;
    unreached = false;
    last = guarded.result;
    if (isRetryable(guarded.result)) continue;
    return { attempts, connector: name, result: guarded.result, unreached };
  }
  return { attempts, connector: null, result: last, unreached };
}

/** What an execution means for the movement, in the kind's own update vocabulary. */
export function fromExecution<U>(kind: AnyKind, execution: Execution<{ kind: string }>): U {
  const { result, connector } = execution;
  if (result.kind !== 'error') return kind.fromState(connector!, result) as U;
  if (execution.unreached && kind.waitsWhenUnreached) return kind.unknown(null) as U;
  const error = result as ConnectorError;
  const mayHaveActed = connectorThatMayHaveActed(connector, error);
  return (mayHaveActed === null ? kind.nothingDone(connector, error.code) : kind.unknown(mayHaveActed)) as U;
}

/** One status question to one connector; undefined when it could not answer (skipped or error). */
export async function askStatus<S extends { kind: string }>(
  call: CallDeps,
  kind: AnyKind,
  name: string,
  stored: MovementRow,
  db: Executor,
): Promise<{ report: S | { kind: 'not_found' }; attempt: Attempt } | undefined> {
  const row = kind.statusRow ? await kind.statusRow(db, stored) : stored;
  const request = { reference: referenceOf(kind, row), connectorReference: name === row.connector ? row.connectorReference : null };
  const guarded = await callConnector<S | { kind: 'not_found' }>(call, name, (c, signal) => kind.status(c, request, signal, row), `${kind.object}.status`);
  if ('skipped' in guarded || guarded.result.kind === 'error') return undefined;
  return { report: guarded.result as S | { kind: 'not_found' }, attempt: attemptFor(kind, name, guarded) };
}

export type Located<S> =
  | { found: true; connector: string; state: S; attempt: Attempt }
  /**
   * `certain: false` when some connector could not answer: then nobody may send it until it can.
   * `replay`: the one connector that could not answer but replays sends (Connector.replaysSendsForMs),
   * every other one having said it holds nothing: the movement is there or nowhere, and sending the
   * same request there again, and only there, answers which.
   */
  | { found: false; certain: boolean; replay?: string };

/** Asks every candidate connector whether it holds the movement. */
export async function locate<S extends { kind: string }>(
  call: CallDeps,
  kind: AnyKind,
  row: MovementRow,
  candidates: readonly string[],
  db: Executor,
): Promise<Located<S>> {
  const unanswered: string[] = [];
  for (const name of candidates) {
    const asked = await askStatus<S>(call, kind, name, row, db);
    if (!asked) {
      unanswered.push(name);
      continue;
    }
    if (asked.report.kind !== 'not_found') return { found: true, connector: name, state: asked.report as S, attempt: asked.attempt };
  }
  if (unanswered.length === 0) return { found: false, certain: true };
  // Two silent connectors: either may hold it, and a send to one could not tell about the other.
  if (unanswered.length > 1) return { found: false, certain: false };
  const name = unanswered[0]!;
  const window = (await resolveConnector(call, name))?.replaysSendsForMs;
  const withinWindow = window !== undefined && call.now().getTime() - row.createdAt.getTime() < window;
  return withinWindow ? { found: false, certain: true, replay: name } : { found: false, certain: false };
}

/**
 * Sends the movement again to the one connector that may hold it (locate's `replay`), under the
 * same reference: its answer, first or replayed, stands. Undefined when it still cannot tell —
 * even a 429 or a refused connection now says nothing about the first send.
 */
export async function replaySend<S extends { kind: string }>(call: CallDeps, kind: AnyKind, name: string, request: unknown): Promise<Execution<S> | undefined> {
  const execution = await routeCall<S>(call, kind, [name], request);
  return execution.unreached || isRetryable(execution.result) ? undefined : execution;
}
