// Test helpers (`POST /v1/test-helpers/{payments,payouts,mandates}/{id}/resolve`) ask the simulated
// processor holding the object to settle it now, through the processor's own test controls (which
// the registry hands out by connector name, for the connectors that have them); what the processor
// then reports is applied like any other report.
import { ApiError } from '../kernel/errors.js';
import { callConnector, type CallDeps } from '../connectors/router.js';
import type { TestControls } from '../connectors/test-controls.js';
import type { ConnectorError } from '../connectors/types.js';

/** What the helpers need of the payments runtime. */
export interface TestControlDeps {
  call: CallDeps;
  connectors: { testControls(name: string): TestControls | undefined };
}

function unavailable(connector: string, what: string): ApiError {
  return new ApiError('processor_unavailable', { message: `The simulated processor ${connector} could not settle the ${what}; retry.` });
}

/** The state the processor settled on; processor_unavailable when it has no test controls or cannot answer. */
export async function settleThroughTestControl<S extends { kind: string }>(
  rt: TestControlDeps,
  connector: string,
  what: string,
  control: (controls: TestControls, signal: AbortSignal) => Promise<S | { kind: 'not_found' } | ConnectorError>,
): Promise<S> {
  const controls = rt.connectors.testControls(connector);
  if (!controls) throw unavailable(connector, what);
  const guarded = await callConnector(rt.call, connector, (_connector, signal) => control(controls, signal));
  if ('skipped' in guarded || guarded.result.kind === 'error' || guarded.result.kind === 'not_found') throw unavailable(connector, what);
  return guarded.result as S;
}
