// Test helpers (`POST /v1/test-helpers/{payments,payouts,mandates}/{id}/resolve`) ask the simulated
// processor holding the object to settle it now, through the processor's own test control; what
// the processor then reports is applied like any other report.
import { ApiError } from '../kernel/errors.js';
import { callConnector, type CallDeps } from '../connectors/router.js';
import { connectorError, type Connector, type ConnectorError } from '../connectors/types.js';

type Control<S> = ((signal: AbortSignal) => Promise<S | { kind: 'not_found' } | ConnectorError>) | undefined;

/** The state the processor settled on; processor_unavailable when it has no control or cannot answer. */
export async function settleThroughTestControl<S extends { kind: string }>(
  call: CallDeps,
  connector: string,
  what: string,
  control: (c: Connector) => Control<S>,
): Promise<S> {
  const guarded = await callConnector(call, connector, async (c, signal) => {
    const ask = control(c);
    return ask ? ask(signal) : connectorError('request_rejected', `${connector} has no test controls`);
  });
  if ('skipped' in guarded || guarded.result.kind === 'error' || guarded.result.kind === 'not_found') {
    throw new ApiError('processor_unavailable', { message: `The simulated processor ${connector} could not settle the ${what}; retry.` });
  }
  return guarded.result as S;
}
