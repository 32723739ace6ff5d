// Webhook readings that carry more than the movement kinds registered today apply (captures.ts):
// how they reach those kinds meanwhile.
import type { ChargeState, InboundEvent, InboundReport } from './types.js';

/**
 * The reading as the movement kinds registered today take it: a void's outcome as the payment
 * report it always was (the authorisation was cancelled, nothing charged), a capture's as naming
 * nothing of ours (acknowledged, not applied).
 */
export function movementEventOf(report: InboundReport): InboundEvent {
  if (report.object === 'void') {
    const state: ChargeState =
      report.state.kind === 'canceled'
        ? { kind: 'declined', connectorReference: report.state.connectorReference, failureCode: 'processing_error', declineType: 'processor', message: 'The authorisation was cancelled at the processor.' }
        : { kind: 'pending', connectorReference: report.state.connectorReference ?? '' };
    return { eventId: report.eventId, object: 'payment', reference: report.state.kind === 'failed' ? '' : report.reference, state };
  }
  if (report.object === 'capture') return { eventId: report.eventId, object: 'payment', reference: '', state: { kind: 'pending', connectorReference: '' } };
  return report;
}
