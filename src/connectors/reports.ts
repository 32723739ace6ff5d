// Webhook readings that carry more than the movement kinds registered today apply (captures.ts):
// how they reach those kinds meanwhile.
import type { ChargeState, InboundEvent, InboundReport } from './types.js';

/**
 * The reading as the movement kinds registered today take it: a void's outcome as the payment
 * report it always was (the authorisation was cancelled, nothing charged). A capture's outcome is
 * the capture movement's own report already.
 */
export function movementEventOf(report: InboundReport): InboundEvent {
  if (report.object === 'void') {
    const state: ChargeState =
      report.state.kind === 'canceled'
        ? { kind: 'declined', connectorReference: report.state.connectorReference, failureCode: 'processing_error', message: 'The authorisation was cancelled at the processor.' }
        : { kind: 'pending', connectorReference: report.state.connectorReference ?? '' };
    return { eventId: report.eventId, object: 'payment', reference: report.state.kind === 'failed' ? '' : report.reference, state };
  }
  return report;
}
