// Test helpers (`POST /v1/test-helpers/{payments,captures,payouts,mandates}/{id}/resolve`) ask the simulated
// processor holding the object to settle it now, through the processor's own test controls (which
// the registry hands out for the built-in connectors that have them, whether the route names them or
// a connector account of theirs); what the processor then reports is applied like any other report.
import { payoutStates } from './payouts/state.js';
import { ApiError } from '../kernel/errors.js';
import { callConnector, resolveConnector, type CallDeps, type Owner } from '../connectors/router.js';
import type { TestControls } from '../connectors/test-controls.js';
import type { Connector, ConnectorError } from '../connectors/types.js';
import type { PayoutRow } from './payouts/transitions.js';
import type { Runtime } from '../runtime.js';
import { submitPayoutNow } from './payouts/submission.js';
import type { Db } from '../storage/db.js';

/** What the helpers need of the payments runtime. */
export interface TestControlDeps {
  callsFor(owner: Owner): CallDeps;
  connectors: { testControlsOf(connector: Connector): TestControls | undefined };
}

function unavailable(connector: string, what: string): ApiError {
  return new ApiError('processor_unavailable', { message: `The simulated processor ${connector} could not settle the ${what}; retry.` });
}

/** The state the processor settled on; processor_unavailable when it has no test controls or cannot answer. */
export async function resolveThroughTestControl<S extends { kind: string }>(
  rt: TestControlDeps,
  owner: Owner,
  connector: string,
  what: string,
  control: (controls: TestControls, signal: AbortSignal) => Promise<S | { kind: 'not_found' } | ConnectorError>,
): Promise<S> {
  // The route key may name a connector account of a simulated processor: its connector has the controls.
  const calls = rt.callsFor(owner);
  const resolved = await resolveConnector(calls, connector);
  const controls = resolved && rt.connectors.testControlsOf(resolved);
  if (!controls) throw unavailable(connector, what);
  const guarded = await callConnector(calls, connector, (_connector, signal) => control(controls, signal), `${what}.test_control`);
  if ('skipped' in guarded || guarded.result.kind === 'error' || guarded.result.kind === 'not_found') throw unavailable(connector, what);
  return guarded.result as S;
}

const POLL_MS = 20;

/**
 * The payout as it stands once a bank holds it, so that the payout helper works at any moment
 * after create. A payout still pending is submitted now. One that another submission has claimed
 * (right after create, or a worker's) is `processing` at no connector while that submission calls
 * the banks, a state the API does not show: it is waited for, at most as long as the submission's
 * connector calls can take and a second for its transactions. Past that its submitter died, the
 * worker takes the payout over once its lease ends, and the helper answers as before
 * (invalid_state: no bank has taken it yet).
 */
export async function payoutAtBank(db: Db, rt: Runtime, row: PayoutRow, reload: () => Promise<PayoutRow>): Promise<PayoutRow> {
  const deadline = Date.now() + row.route.length * rt.config.connectorTimeoutMs + 1000;
  for (;;) {
    if (payoutStates.is(row.status, 'unsent')) {
      await submitPayoutNow(db, rt, row.accountId, row.id);
      row = await reload();
    }
    // Still pending: another submission holds the row while it claims it.
    const atNoBank = payoutStates.is(row.status, 'unsent') || (payoutStates.is(row.status, 'atBank') && row.connector === null);
    if (!atNoBank || Date.now() > deadline) return row;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    row = await reload();
  }
}
