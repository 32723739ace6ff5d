// How each kind of money movement is asked of a connector, and how the connector's answers read in
// the movement's own words: the part of a movement kind's descriptor (src/movement/kind.ts) that
// the engine calls between a movement's phases. It sits here, beside the connectors' own mappings,
// so that a movement's calls and their readings stay in the connector layer: between admitting a
// movement and applying its outcome by the resource's rules, the engine never calls back into the
// resource (docs/development.md#layout).
import type { DeclineType } from '../../kernel/decline-types.js';
import { connectorError, type Connector, type ConnectorError, type ConnectorErrorCode, type StatusRequest } from '../types.js';

/** What a processor said about one movement, in our words. */
export type Report<S> = S | { kind: 'not_found' } | ConnectorError;

/** A state as an attempt record tells it: the processor took it, holds it pending (or waiting for the customer), or refused it. */
export type AttemptReading = { kind: 'succeeded' | 'pending' | 'requires_action' } | { kind: 'declined'; failureCode: string; declineType?: DeclineType; merchantAdvice?: string };

/** A movement's calls at a connector and the readings of their answers, as update values the resource's rules apply. */
export interface MovementCalls<Row, State extends { kind: string }, Update extends { kind: string }, Request> {
  /** The movement itself (charge, refund, payout, mandate set-up), idempotent by our id at the processor. */
  send(connector: Connector, request: Request, signal: AbortSignal): Promise<State | ConnectorError>;
  /** The processor's view of it; a connector that cannot hold this kind answers not_found. */
  status(connector: Connector, request: StatusRequest, signal: AbortSignal, row: Row): Promise<Report<State>>;
  attempt(state: State): AttemptReading;
  fromState(connector: string, state: State): Update;
  /** No connector acted on it: every one refused or failed before the processor's books. */
  nothingDone(connector: string | null, code: ConnectorErrorCode): Update;
  /** Sent and no answer came back: the processor may have acted, so it is verified later. */
  unknown(connector: string | null): Update;
}

/** The refusal of a connector that does not offer an optional call (`what`: "cannot send payouts"). */
export function lacks(connector: Connector, what: string): ConnectorError {
  return connectorError('request_rejected', `${connector.name} ${what}`);
}

/**
 * A processor's report as an update, in one shape for every kind: the status it means for us
 * (`to`, from the kind's exhaustive map of its states), the connector, its reference, and the
 * failure in our words when there is one.
 */
export function reported<K extends string>(
  to: K,
  connector: string,
  state: { connectorReference: string | null; failureCode?: string; message?: string; declineType?: DeclineType },
): { kind: K; connector: string; connectorReference: string | null; failureCode?: string; failureMessage?: string; declineType?: DeclineType } {
  const base = { kind: to, connector, connectorReference: state.connectorReference };
  if (state.failureCode === undefined) return base;
  const failed = { ...base, failureCode: state.failureCode, failureMessage: state.message };
  return state.declineType === undefined ? failed : { ...failed, declineType: state.declineType };
}
